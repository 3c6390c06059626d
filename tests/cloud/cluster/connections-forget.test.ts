// The edges connected to the other cloud peers, as each peer hears them over NATS: a peer's id is new at
// every start, so a peer that restarted (or left) must be forgotten, not remembered for good by every other
// peer (a peer restarted every few minutes for months would otherwise leave an entry per start).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonBytes } from "../../../cloud/cluster/service/bus.js";
import { NatsBus } from "../../../cloud/cluster/service/nats-bus.js";
import type { IscpBroker } from "../../../cloud/iscp/broker/broker.js";
import { shareConnections } from "../../../cloud/iscp/service/cluster-connections.js";
import { natsInstalled, startNats, type NatsServer } from "../../support/nats.js";
import { eventually } from "./helpers.js";

const item = (edge: string) => ({
  project: "p",
  edge_uuid: edge,
  transport: "websocket",
  upstreams: 1,
  downstreams: 0,
  data_rate: { points_per_second: 0, bytes_per_second: 0 },
});

describe.runIf(natsInstalled())("the other peers' connections", () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNats();
  }, 120_000);
  afterAll(() => nats?.stop());

  it("are forgotten with their peer: 30 restarts of another peer leave one peer remembered", async () => {
    const receiver = await NatsBus.open({ servers: nats.url, instanceId: "receiver" });
    const sender = await NatsBus.open({ servers: nats.url, instanceId: "sender" });
    let clock = 1_000_000;
    const noEdges = { connections: () => [] } as unknown as IscpBroker;
    const connections = shareConnections(noEdges, receiver, () => clock);
    try {
      const announce = (peer: string, edge: string) =>
        sender.publish("cloud.iscp.connections", jsonBytes({ i: peer, c: [item(edge)] }));
      // The subscription reaches the server: an announcement is heard.
      await eventually(
        async () => {
          announce("first", "edge-first");
          return connections.list("p").length > 0;
        },
        30_000,
        "the first announcement",
      );
      // Another peer started again and again (a new id each time), each start a minute after the last.
      for (let n = 0; n < 30; n++) {
        clock += 60_000;
        announce(`peer-${n}`, `edge-${n}`);
        await eventually(
          async () => connections.list("p").some((c) => c.edge_uuid === `edge-${n}`),
          30_000,
          `peer-${n} heard`,
        );
      }
      expect(connections.list("p").map((c) => c.edge_uuid)).toEqual(["edge-29"]);
      expect(connections.peers()).toBe(1);
    } finally {
      connections.stop();
      await sender.close();
      await receiver.close();
    }
  });
});
