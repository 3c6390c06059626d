// A network cut between agent and cloud: the agent reconnects with backoff and resumes its iSCP
// stream (the cloud still holds it), so the measurement keeps one sequence and every point arrives once.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, until, type Stack } from "./stack.js";
import { startStackBehindRelay, type TcpRelay } from "./tcp-cut.js";

let s: Stack;
let relay: TcpRelay;
beforeAll(async () => void ({ s, relay } = await startStackBehindRelay()), 120_000);
afterAll(async () => {
  await s?.close();
  await relay?.close();
});

const pendingOnAgent = async () =>
  (await s.agentApi.get<{ items: { pending_data_size: number }[] }>("/measurements")).body.items.some(
    (m) => m.pending_data_size > 0,
  );
const upstream = async () => (await s.agentApi.get<{ code: string; error: string }>("/upstreams/rt/state")).body;

it("resumes the stream after a network cut; every point arrives once, in one sequence", async () => {
  await until(async () => ["quiet", "connected"].includes((await upstream()).code), 30_000, "upstream open");
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    await writeNumbered(fh, 0, 300);
    await until(async () => (await cloudIndices(s)).length === 300, 30_000, "300 points in real time");
    const before = relay.accepted;
    // The link dies silently: chunks sent now never reach the cloud (no ack) until the connection is cut.
    relay.blackhole();
    await writeNumbered(fh, 300, 400);
    await new Promise((r) => setTimeout(r, 300));
    relay.cut();
    await writeNumbered(fh, 400, 600);
    await until(
      async () => relay.accepted > before && ["quiet", "connected"].includes((await upstream()).code),
      30_000,
      "reconnected",
    );
    await writeNumbered(fh, 600, 900);
    // Chunks whose acks were lost in the cut are sent again once the stream is resumed (the cloud acks
    // what it already had): everything arrives in real time, exactly once, and nothing stays pending on
    // the agent while the measurement goes on.
    const live = await until(
      async () => {
        const i = await cloudIndices(s);
        return i.length >= 900 && !(await pendingOnAgent()) && i;
      },
      30_000,
      "900 points in real time, nothing pending while measuring",
    );
    expect(live).toEqual(range(0, 900));
  } finally {
    await fh.close();
  }
  // Ending the measurement (its channel disabled) leaves nothing pending.
  await s.agentApi.patch("/device-connectors/upstream/dc", { enabled: false });
  const got = await until(
    async () => {
      const i = await cloudIndices(s);
      return i.length >= 900 && !(await pendingOnAgent()) && i;
    },
    60_000,
    "900 points, nothing pending",
  );
  expect(got).toEqual(range(0, 900));
  const [m] = await s.measurements();
  const r = await fetch(`${s.peer.url}/api/v1/projects/${s.cloud.projectUuid}/measurements/${m!.uuid}/sequences`, {
    headers: { "X-Intdash-Token": s.cloud.token },
  });
  expect(((await r.json()) as { items: unknown[] }).items).toHaveLength(1);
}, 120_000);
