// Points for the queue's tests, and the order a chunk keeps them in.
import type { DataPoint } from "../../../runtime/datapoint.js";
import { point } from "../../support/datapath.js";

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
