// The webhooks area: a project's hooks, told of its measurements' events by signed HTTP deliveries
// with retries, and the delivery history (the intdash webhook API's project operations).
import type { CloudModule } from "../module.js";
import { webhookMigrations } from "./repo/migrations.js";
import { hookRoutes } from "./routes/hooks.js";
import { watchMeasurements } from "./service/measurement-hooks.js";
import { WebhookService } from "./service/webhook-service.js";

export const webhooksModule: CloudModule = {
  name: "webhooks",
  migrations: webhookMigrations,
  routes: hookRoutes,
  async init(svc) {
    svc.webhooks = new WebhookService(svc.db, svc.log);
    const watch = watchMeasurements(svc);
    svc.webhooks.onHooksChanged = watch;
    await svc.webhooks.start();
    svc.onClose.push(async () => {
      svc.webhooks.onHooksChanged = () => {};
      watch(false);
      await svc.webhooks.close();
    });
  },
};
