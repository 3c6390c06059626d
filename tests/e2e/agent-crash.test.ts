// kill -9 of the agent mid-stream: after a restart every point it had accepted reaches the cloud,
// exactly once, and what reaches the cloud is an unbroken prefix of what the connector wrote.
import type { FileHandle } from "node:fs/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startConnectedStack, until, type Stack } from "./stack.js";

let s: Stack;
beforeAll(async () => void (s = await startConnectedStack({ agent: "child" })), 120_000);
afterAll(async () => s?.close());

interface AgentMeasurement {
  uuid: string;
  chunk_count: number;
  pending_data_size: number;
}
const agentMeasurements = async () => (await s.agentApi.get<{ items: AgentMeasurement[] }>("/measurements")).body.items;

/** Keeps writing numbered points from `from` until the FIFO breaks; resolves with the next index. */
async function writeUntilBroken(fh: FileHandle, from: number): Promise<number> {
  let i = from;
  try {
    for (;;) {
      await writeNumbered(fh, i, i + 50);
      i += 50;
      await new Promise((r) => setTimeout(r, 5));
    }
  } catch {
    return i;
  }
}

it("loses no accepted point when the agent is killed with SIGKILL", async () => {
  const fh = await openFifoWriter(s.fifo("dc"));
  await writeNumbered(fh, 0, 500);
  await until(async () => (await cloudIndices(s)).length === 500, 30_000, "500 points in real time");

  // With the cloud away, what the agent accepts stays in its queue: wait until it says it holds it.
  await s.stopCloud();
  await writeNumbered(fh, 500, 1500);
  let last = -1;
  await until(
    async () => {
      const size = (await agentMeasurements()).reduce((n, m) => n + m.pending_data_size, 0);
      const stable = size > 0 && size === last;
      last = size;
      return stable;
    },
    30_000,
    "the agent holds the offline points",
  );

  // Mid-stream: the connector keeps writing while the agent dies.
  const writing = writeUntilBroken(fh, 1500);
  await new Promise((r) => setTimeout(r, 300));
  await s.stopAgent("SIGKILL");
  const written = await writing;
  expect(written).toBeGreaterThan(1500);
  await fh.close().catch(() => undefined);

  await s.startCloud();
  await s.startAgent();
  const got = await until(
    async () => {
      const a = await cloudIndices(s);
      const pending = (await agentMeasurements()).reduce((n, m) => n + m.pending_data_size, 0);
      return a.length >= 1500 && pending === 0 && a;
    },
    60_000,
    "the accepted points in the cloud",
  );
  // An unbroken prefix: nothing accepted was lost, nothing came twice, nothing after a gap.
  expect(got).toEqual(range(0, got.length));
  expect(got.length).toBeLessThanOrEqual(written);
  console.info(`agent-crash: ${written} written, ${got.length} in the cloud`);
}, 120_000);
