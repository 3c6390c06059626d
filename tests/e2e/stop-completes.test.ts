// SIGTERM of the agent while it streams: the measurement ends in the cloud before the agent exits (its
// upstream closes with the totals and closes the session), so the cloud shows it completed at once, not
// `measuring` until the agent's next start.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startConnectedStack, until, type Stack } from "./stack.js";

let s: Stack;
beforeAll(async () => void (s = await startConnectedStack({ agent: "child" })), 120_000);
afterAll(async () => s?.close());

it("the cloud shows the measurement completed right after the agent exited on SIGTERM", async () => {
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    await writeNumbered(fh, 0, 500);
    await until(async () => (await cloudIndices(s)).length === 500, 30_000, "500 points in real time");
    const [during] = await s.measurements();
    expect(during!.status).toBe("measuring");
    await s.stopAgent("SIGTERM");
  } finally {
    await fh.close().catch(() => undefined);
  }
  const [m] = await s.measurements();
  expect(m).toMatchObject({ status: "finished", received_data_points: 500 });
  const r = await fetch(`${s.peer.url}/api/v1/projects/${s.cloud.projectUuid}/measurements/${m!.uuid}`, {
    headers: { "X-Intdash-Token": s.cloud.token },
  });
  expect(await r.json()).toMatchObject({
    ended: true,
    completed: true,
    sequences: { status: "completed", expected_data_points: 500, received_data_points: 500 },
  });
  expect(await cloudIndices(s)).toEqual(range(0, 500));
}, 120_000);
