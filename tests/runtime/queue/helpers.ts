// Points for the queue's tests, the order a chunk keeps them in, and the temp dirs the queues open in.
import { afterEach, beforeEach } from "vitest";
import type { DataPoint } from "../../../runtime/datapoint.js";
import type { DurableQueue } from "../../../runtime/queue/store.js";
import { point, tempDir } from "../../support/datapath.js";

/** `n` points over three data ids of `tag`, alternating two types, each payload `size` bytes. */
export const pts = (n: number, tag = "p", size = 16): DataPoint[] =>
  Array.from({ length: n }, (_, i) =>
    point(`${tag}/${i % 3}`, i % 2 ? "bytes" : "float64", Buffer.alloc(size, i), i * 1000),
  );

/** Points in the order a chunk keeps them: grouped by data id (first appearance), arrival order within a group. */
export function grouped(points: readonly DataPoint[]): DataPoint[] {
  const order = new Map<string, DataPoint[]>();
  for (const p of points) {
    const k = `${p.type}\u0000${p.name}`;
    (order.get(k) ?? order.set(k, []).get(k)!).push(p);
  }
  return [...order.values()].flat();
}

/** A temp dir for each test, and the queues opened in it: closed (again: close is idempotent) and removed after it. */
export function queueDirs(): { dir: () => string; track: (q: DurableQueue) => DurableQueue } {
  let dir = "";
  let cleanup = async () => {};
  const opened: DurableQueue[] = [];
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(async () => {
    for (const q of opened.splice(0)) await q.close().catch(() => {});
    await cleanup();
  });
  return { dir: () => dir, track: (q) => (opened.push(q), q) };
}
