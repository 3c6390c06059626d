// The operations area: health probes for orchestrators and load balancers.
import type { CloudModule } from "../module-contract.js";
import { aliveRoute, readyRoute } from "./routes/health.js";

export const opsModule: CloudModule = {
  name: "ops",
  routes: [aliveRoute, readyRoute],
};
