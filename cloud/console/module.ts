// The web console: its OAuth client, its settings (map tiles), and its built files served under /console/ (the browser
// sources are in web/, bundled by `npm run build`; no server code imports them).
import type { ProvidingModule } from "../module-contract.js";
import type { Services } from "../services.js";
import { consoleClientResolver, registerConsoleClient } from "./service/console-client.js";
import { consoleFastPath } from "./routes/static-files.js";
import { consoleSettingsRoute } from "./routes/settings.js";

export const consoleModule: ProvidingModule<Pick<Services, "config" | "db" | "oauth">, {}> = {
  name: "console",
  async provide(svc) {
    await registerConsoleClient(svc);
    return {};
  },
  routes: [consoleSettingsRoute],
  clientResolvers: (svc) => [consoleClientResolver(svc)],
  fastPaths: [consoleFastPath()],
};
