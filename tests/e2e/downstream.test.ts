// A downstream brings points from the cloud to a device connector's FIFO: another edge publishes over
// iSCP, the agent's downstream (filtered by source edge and data name) receives them, the downstream
// filters apply, and the downstream IPC channel writes the ones under its prefix, prefix removed.
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DataPoint } from "../../runtime/datapoint.js";
import { decodeInto } from "../support/datapath.js";
import { IscpV2CompatDecoder } from "../../runtime/ipc/iscp-v2-compat.js";
import { IscpClient } from "../../runtime/iscp/iscp-client.js";
import { connectWebSocket } from "../../proto/transport/ws/client.js";
import { edgeToken, makeEdge } from "../cloud/org/helpers.js";
import { caller } from "../cloud/accounts/helpers.js";
import { startStack, until, type Stack } from "./stack.js";

let s: Stack;
let publisher: IscpClient;
let pubEdge: { uuid: string; secret: string };

beforeAll(async () => {
  s = await startStack();
  const admin = caller(s.peer, s.cloud.token);
  const e = await makeEdge(admin, "publisher");
  await admin(`/auth/projects/${s.cloud.projectUuid}/edges`, { method: "POST", json: { edge_name: "publisher" } });
  pubEdge = e;
  const tok = (await edgeToken(s.peer, e)).body.access_token as string;
  publisher = await IscpClient.connect({
    transport: () => connectWebSocket({ url: `${s.peer.url.replace(/^http/, "ws")}/api/iscp/connect` }),
    token: tok,
    nodeId: e.uuid,
    projectUuid: s.cloud.projectUuid,
    reconnect: false,
  });
  await s.connect();
}, 120_000);
afterAll(async () => {
  await publisher?.close();
  await s?.close();
});

describe("downstream: cloud -> agent -> connector FIFO", () => {
  it("delivers matching points to the channel's FIFO in its format, prefix removed, through the downstream filters", async () => {
    const fifo = s.fifo("down");
    await s.put("/device-connectors/downstream", {
      id: "out",
      format: "iscp-v2-compat",
      data_name_prefix: "cmd/",
      ipc: { type: "fifo", path: fifo },
    });
    await s.put("/filters/downstream", {
      id: "ren",
      type: "rename",
      target: { type: "name", patterns: ["cmd/old/#"] },
      change_to: { type: "rename", strip_prefix: "cmd/old/", add_prefix: "cmd/new/" },
    });
    await s.put("/downstreams", {
      id: "dn",
      dest_ids: ["out"],
      qos: "partial",
      filters: [{ src_edge_uuid: pubEdge.uuid, data_filters: [{ type: "#", name: "cmd/#" }] }],
    });
    await until(
      async () =>
        ["connected", "quiet"].includes(
          ((await s.agentApi.get("/downstreams/dn/state")).body as { code: string }).code,
        ),
      30_000,
      "downstream connected",
    );
    await until(() => fs.existsSync(fifo), 30_000, "downstream FIFO created");

    // Read the FIFO as the connector would.
    const got: DataPoint[] = [];
    const dec = new IscpV2CompatDecoder({ srcId: "test" });
    const reader = fs.createReadStream(fifo);
    reader.on("data", (b) => decodeInto(dec, b as Buffer, got));

    const up = await publisher.openUpstream({ sessionId: randomUUID(), persist: false });
    const sent = Array.from({ length: 50 }, (_, i) => ({
      name: i % 5 === 0 ? "cmd/old/x" : i % 5 === 1 ? "other/y" : `cmd/${i % 3}`,
      payload: Buffer.from([i, 1, 2, 3]),
      elapsed: 1_000_000 * (i + 1),
    }));
    for (const p of sent) {
      up.write({ name: p.name, type: "bytes" }, [{ elapsedTime: p.elapsed, payload: p.payload }]);
      up.flush();
    }
    const want = sent
      .filter((p) => p.name.startsWith("cmd/"))
      .map((p) => ({
        name: p.name.replace(/^cmd\/old\//, "new/").replace(/^cmd\//, ""),
        type: "bytes",
        payload: p.payload.toString("hex"),
        elapsedNs: p.elapsed,
      }));
    await until(() => got.length >= want.length, 30_000, `${want.length} frames in the FIFO`);
    reader.destroy();
    const seen = got.map((p) => ({
      name: p.name,
      type: p.type,
      payload: Buffer.from(p.payload).toString("hex"),
      elapsedNs: p.elapsedNs,
    }));
    // Chunks of different data ids may be relayed in any order between ids, but each id keeps its order.
    const byName = (xs: typeof seen) => {
      const m: Record<string, typeof seen> = {};
      for (const x of xs) (m[x.name] ??= []).push(x);
      return m;
    };
    expect(byName(seen)).toEqual(byName(want));
    expect(seen).toHaveLength(want.length);
  }, 120_000);
});
