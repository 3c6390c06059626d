// The web console: its OAuth client, and its built files served under /console/ (the browser
// sources are in web/, bundled by `npm run build`; no server code imports them).
import type { CloudModule } from "../module.js";
import { consoleClientResolver, registerConsoleClient } from "./console-client.js";
import { installConsole } from "./static-files.js";

export const consoleModule: CloudModule = {
  name: "console",
  async init(svc) {
    await registerConsoleClient(svc);
    svc.oauth.clientResolvers.unshift(consoleClientResolver(svc));
  },
  attach(server) {
    installConsole(server);
  },
};
