// The cloud peer's modules, in start-up order (later ones may use what earlier ones added).
import type { CloudModule } from "./module.js";
import { clusterModule } from "./cluster/module.js";
import { accountsModule } from "./accounts/module.js";
import { oauthModule } from "./oauth/module.js";
import { orgModule } from "./org/module.js";
import { measurementsModule } from "./measurements/module.js";
import { brokerModule } from "./iscp/module.js";
import { webhooksModule } from "./webhooks/module.js";
import { opsModule } from "./ops/module.js";
import { consoleModule } from "./console/module.js";

export const modules: CloudModule[] = [clusterModule, accountsModule, oauthModule, orgModule, measurementsModule, webhooksModule, brokerModule, opsModule, consoleModule];
