// The webhooks area: a project's hooks, told of its measurements' events by signed HTTP deliveries
// with retries, and the delivery history (the intdash webhook API's project operations).
import type { ProvidingModule } from "../module-contract.js";
import type { CoreServices, Services } from "../services.js";
import { webhookMigrations } from "./repo/migrations.js";
import { hookRoutes } from "./routes/hooks.js";
import { watchMeasurements } from "./service/measurement-hooks.js";
import { WebhookService } from "./service/webhook-service.js";

export const webhooksModule: ProvidingModule<
  CoreServices & Pick<Services, "measurements">,
  Pick<Services, "webhooks">
> = {
  name: "webhooks",
  migrations: webhookMigrations,
  routes: hookRoutes,
  async provide(svc) {
    const webhooks = new WebhookService(svc.db, svc.log);
    const watch = watchMeasurements({ log: svc.log, measurements: svc.measurements, webhooks });
    webhooks.onHooksChanged = watch;
    await webhooks.start();
    svc.onClose.push(async () => {
      webhooks.onHooksChanged = () => {};
      watch(false);
      await webhooks.close();
    });
    return { webhooks };
  },
};
