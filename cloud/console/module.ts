// The web console: its OAuth client, and its built files served under /console/ (the browser
// sources are in web/, bundled by `npm run build`; no server code imports them).
import type { ProvidingModule } from "../module-contract.js";
import type { Services } from "../services.js";
import { consoleClientResolver, registerConsoleClient } from "./console-client.js";
import { consoleFastPath } from "./static-files.js";

export const consoleModule: ProvidingModule<Pick<Services, "config" | "db" | "oauth">, {}> = {
  name: "console",
  async provide(svc) {
    await registerConsoleClient(svc);
    return {};
  },
  clientResolvers: (svc) => [consoleClientResolver(svc)],
  fastPaths: [consoleFastPath()],
};
