// The cluster area: how this peer talks to the other peers on the same database (--nats). Without
// --nats the bus is in-process and delivers nothing: one peer, today's behaviour. First in module
// order, so every later area can subscribe to the notices it needs in its own provide.
import crypto from "node:crypto";
import type { ProvidingModule } from "../module-contract.js";
import type { CoreServices, Services } from "../services.js";
import { InProcessBus, type ClusterBus } from "./service/bus.js";
import { NatsBus } from "./service/nats-bus.js";

declare module "../services.js" {
  interface Services {
    cluster: { bus: ClusterBus };
  }
}

export const clusterModule: ProvidingModule<CoreServices, Pick<Services, "cluster">> = {
  name: "cluster",
  async provide(svc) {
    const instanceId = crypto.randomUUID();
    const log = svc.log.child({ area: "cluster" });
    const bus = svc.config.nats
      ? await NatsBus.open({ servers: svc.config.nats, instanceId, onWarn: (m) => log.warn(m) })
      : new InProcessBus(instanceId);
    svc.onClose.push(() => bus.close());
    if (bus.kind === "nats") log.info({ instanceId }, "cluster bus on NATS");
    return { cluster: { bus } };
  },
};
