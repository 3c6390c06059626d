// A stream the agent can neither resume nor open anew (the cloud restarted while its PostgreSQL is down) is
// opened again once the cloud can take it: live viewers see the agent's new points without the agent being
// restarted; one failed reopen does not leave the upstream dead ("no new stream; waiting for the link").
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectWebSocket } from "../../proto/transport/ws/client.js";
import { IscpClient } from "../../runtime/iscp/iscp-client.js";
import { postgresInstalled, startPostgres, type PgServer } from "../support/postgres.js";
import { cloudIndices, writeNumbered } from "./points.js";
import { openFifoWriter, until, type Stack } from "./stack.js";
import { startStackBehindRelay, type TcpRelay } from "./tcp-cut.js";

let pg: PgServer | undefined;
let s: Stack | undefined;
let relay: TcpRelay | undefined;
let halted = false;
let viewer: IscpClient | undefined;

beforeAll(async () => {
  if (!postgresInstalled()) return;
  pg = await startPostgres();
  ({ s, relay } = await startStackBehindRelay({ cloud: { database: await pg.createDatabase() } }));
}, 120_000);
afterAll(async () => {
  await viewer?.close().catch(() => undefined);
  if (halted) pg?.resume();
  await s?.close();
  await relay?.close();
  pg?.stop();
}, 120_000);

const ready = async (url: string) =>
  (await fetch(`${url}/api/health/ready`, { signal: AbortSignal.timeout(15_000) }).catch(() => undefined))?.status;

/** A live viewer of the agent's edge on the cloud, as the console's live view is: the indices it receives. */
async function watchEdge(stack: Stack): Promise<number[]> {
  const seen: number[] = [];
  viewer = await IscpClient.connect({
    transport: () => connectWebSocket({ url: `${stack.peer.url.replace("http", "ws")}/api/iscp/connect` }),
    token: stack.cloud.token,
    projectUuid: stack.cloud.projectUuid,
    reconnect: false,
  });
  const down = await viewer.openDownstream({
    filters: [{ sourceNodeId: stack.cloud.edgeUuid, dataFilters: [{ name: "#", type: "#" }] }],
  });
  down.onChunk((c) => {
    for (const g of c.groups) for (const p of g.dataPoints) seen.push(Buffer.from(p.payload).readUInt32BE(0));
  });
  return seen;
}

it.runIf(postgresInstalled())(
  "opens the stream again once the cloud's database is back, after a reopen failed",
  async () => {
    const stack = s!;
    const fh = await openFifoWriter(stack.fifo("dc"));
    try {
      await writeNumbered(fh, 0, 100);
      await until(async () => (await cloudIndices(stack)).length >= 100, 30_000, "points stored before the outage");

      // The agent loses its connection (kept away meanwhile); the cloud restarts and its database goes down.
      relay!.refuse(true);
      relay!.cut();
      await stack.stopCloud();
      await stack.startCloud();
      pg!.halt();
      halted = true;
      const before = relay!.accepted;
      relay!.refuse(false);
      // The agent reconnects: the stream can be neither resumed nor opened again while the database is down.
      await until(async () => relay!.accepted > before, 30_000, "the agent reconnects");
      await writeNumbered(fh, 100, 200);
      // What the agent's API shows meanwhile: the upstream failing to open, with the cloud's reason.
      const failing = await until(
        async () => {
          const st = (await stack.agentApi.get<{ code: string; error: string }>("/upstreams/rt/state")).body;
          return st.code === "error" && st;
        },
        60_000,
        "the upstream reported failing",
      );
      expect(failing.error).toMatch(/^iSCP upstream open failed: /);
      pg!.resume();
      halted = false;
      await until(async () => (await ready(stack.peer.url)) === 200, 30_000, "the cloud ready again");

      const seen = await watchEdge(stack);
      let next = 1000;
      const live = await until(
        async () => {
          await writeNumbered(fh, next, next + 10);
          next += 10;
          const fresh = seen.filter((i) => i >= 1000);
          return fresh.length > 0 && fresh;
        },
        90_000,
        "a live viewer sees new points",
      );
      expect(live.length).toBeGreaterThan(0);
    } finally {
      await fh.close();
    }
  },
  180_000,
);
