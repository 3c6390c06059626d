// The NATS bus between cloud peers: a message a handler cannot read (another version's, garbled) is dropped
// with a warning, and the bus goes on delivering what follows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesJson, jsonBytes } from "../../../cloud/cluster/service/bus.js";
import { NatsBus } from "../../../cloud/cluster/service/nats-bus.js";
import { natsInstalled, startNats, type NatsServer } from "../../support/nats.js";
import { eventually } from "./helpers.js";

describe.runIf(natsInstalled())("NATS bus", () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNats();
  }, 120_000);
  afterAll(() => nats?.stop());

  it("drops a message its handler cannot read, warns, and delivers the next ones", async () => {
    const warnings: string[] = [];
    const receiver = await NatsBus.open({ servers: nats.url, instanceId: "a", onWarn: (w) => warnings.push(w) });
    const sender = await NatsBus.open({ servers: nats.url, instanceId: "b" });
    try {
      const got: Array<{ n: number }> = [];
      receiver.subscribe("test.json", (data) => got.push(bytesJson<{ n: number }>(data)));
      receiver.serve("test.ask", (data) => jsonBytes({ twice: bytesJson<{ n: number }>(data).n * 2 }));
      await new Promise((r) => setTimeout(r, 200)); // the subscriptions reach the server
      sender.publish("test.json", new TextEncoder().encode("{not json"));
      sender.publish("test.json", jsonBytes({ n: 1 }));
      await eventually(async () => got.length === 1, 30_000, "the readable message");
      expect(got).toEqual([{ n: 1 }]);
      expect(warnings.some((w) => w.startsWith("NATS message on test.json not understood, dropped"))).toBe(true);
      // A request it cannot read gets no answer (the asker's timeout), and the next one is answered.
      expect(await sender.request("test.ask", new TextEncoder().encode("{"), 300)).toBeUndefined();
      expect(bytesJson((await sender.request("test.ask", jsonBytes({ n: 4 }), 2_000))!)).toEqual({ twice: 8 });
    } finally {
      await sender.close();
      await receiver.close();
    }
  });
});
