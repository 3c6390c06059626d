// The agent's connection metrics as an operator scrapes them, through a real cloud outage: each stream's state,
// its reconnects, token renewals, data deleted at the queue's capacity, and the age of the oldest data the cloud
// has not acknowledged. A real agent streams to a real cloud peer that is stopped and started again.
import { afterAll, beforeAll, expect, it } from "vitest";
import { writeNumbered } from "../../e2e/points.js";
import { openFifoWriter, startConnectedStack, until, type Stack } from "../../e2e/stack.js";
import { metric } from "../../support/prometheus.js";

let s: Stack;
// Tokens live 5 s, so the agent renews its token (at 80 % of the lifetime) within the test.
beforeAll(async () => void (s = await startConnectedStack({ cloud: { accessTokenTtl: 5 } })), 120_000);
afterAll(async () => s?.close());

const scrape = async () => (await s.agentApi.request<string>("GET", "/metrics")).body;
const rt = { direction: "upstream", stream: "rt" };
const stateOf = (text: string) =>
  ["none", "connected", "quiet", "disconnected", "error"].filter(
    (state) => metric(text, "agent_stream_state", { ...rt, state }) === 1,
  );
const up = (text: string) => ["connected", "quiet"].includes(stateOf(text)[0] ?? "");

it("shows the stream's state, reconnects, token renewals, evictions and the oldest unacknowledged data's age", async () => {
  let text = await until(async () => up(await scrape()) && scrape(), 30_000, "rt connected");
  expect(stateOf(text)).toHaveLength(1);
  for (const name of [
    "agent_stream_reconnects_total",
    "agent_token_refreshes_total",
    "agent_queue_evicted_chunks_total",
  ])
    expect(text).toContain(`# TYPE ${name} counter`);
  expect(metric(text, "agent_stream_reconnects_total", rt)).toBe(0);
  expect(metric(text, "agent_queue_evicted_chunks_total")).toBe(0);
  expect(metric(text, "agent_oldest_unacked_age_seconds")).toBe(0);
  await until(async () => (metric(await scrape(), "agent_token_refreshes_total") ?? 0) >= 1, 30_000, "a token renewal");

  await s.agentApi.patch("/deferred-upload", { data_storage_capacity: 1, limit_data_storage: true });
  await s.stopCloud();
  text = await until(async () => stateOf(await scrape())[0] === "disconnected" && scrape(), 30_000, "rt disconnected");
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    // About 3.2 MiB into a 1 MiB queue while the cloud is away.
    for (let i = 0; i < 400; i += 20) await writeNumbered(fh, i, i + 20, { name: "big", size: 8192 });
  } finally {
    await fh.close();
  }
  text = await until(
    async () => {
      const t = await scrape();
      return (
        (metric(t, "agent_queue_evicted_chunks_total") ?? 0) > 0 &&
        (metric(t, "agent_oldest_unacked_age_seconds") ?? 0) > 0 &&
        t
      );
    },
    30_000,
    "evictions and unacknowledged data counted",
  );
  expect(metric(text, "agent_queue_evicted_bytes_total")).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, 1100));
  // The age grows while nothing is acknowledged.
  expect(metric(await scrape(), "agent_oldest_unacked_age_seconds")).toBeGreaterThan(
    metric(text, "agent_oldest_unacked_age_seconds")!,
  );

  await s.startCloud();
  text = await until(
    async () => {
      const t = await scrape();
      return up(t) && (metric(t, "agent_stream_reconnects_total", rt) ?? 0) >= 1 && t;
    },
    60_000,
    "rt reconnected",
  );
  // Everything kept reaches the cloud (in real time or by deferred upload): nothing is left unacknowledged.
  await until(
    async () => metric(await scrape(), "agent_oldest_unacked_age_seconds") === 0,
    60_000,
    "the queue drained",
  );
  await s.agentApi.patch("/deferred-upload", { data_storage_capacity: 102400, limit_data_storage: false });
}, 180_000);
