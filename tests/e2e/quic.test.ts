// The agent's transport set to QUIC: points reach the cloud over iSCP on QUIC (small volumes: the
// QUIC library, @matrixai/quic, is slow), exactly once across a cloud restart.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startStack, streamThroughRt, until, type Stack } from "./stack.js";

let s: Stack;
beforeAll(async () => {
  s = await startStack({ quic: true });
  await s.connect("quic");
  await streamThroughRt(s);
}, 120_000);
afterAll(async () => s?.close());

const state = async () => (await s.agentApi.get<{ code: string; error: string }>("/upstreams/rt/state")).body;

it("streams over QUIC and recovers what a cloud restart interrupted", async () => {
  await until(async () => ["quiet", "connected"].includes((await state()).code), 30_000, "upstream open over QUIC");
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    await writeNumbered(fh, 0, 200, { size: 64 });
    await until(async () => (await cloudIndices(s)).length === 200, 30_000, "200 points over QUIC");
    await s.stopCloud();
    await writeNumbered(fh, 200, 400, { size: 64 });
    await s.startCloud();
  } finally {
    await fh.close();
  }
  await until(async () => ["quiet", "connected"].includes((await state()).code), 30_000, "upstream back over QUIC");
  const got = await until(
    async () => {
      const i = await cloudIndices(s);
      return i.length >= 400 && i;
    },
    60_000,
    "400 points",
  );
  expect(got).toEqual(range(0, 400));
}, 120_000);
