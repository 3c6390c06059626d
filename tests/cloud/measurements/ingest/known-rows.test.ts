// The chunk writer's memory of existing rows: thousands of live upstreams (one measurement each) whose chunks
// come round in turn all stay known, so a steady stream's commit skips its sequence and data-id statements.
import { expect, it } from "vitest";
import { KnownRows } from "../../../../cloud/measurements/ingest/known-rows.js";

it("keeps 1,000 measurements written round-robin known, and drops the least recently used beyond its bound", () => {
  const k = new KnownRows();
  const key = (i: number) => `m-${i} 2026-01-01T00:00:00Z`;
  for (let round = 0; round < 3; round++)
    for (let i = 0; i < 1000; i++) k.learn(key(i), `s-${i}`, i, ["bytes\u0000bench/edge"]);
  for (let i = 0; i < 1000; i++) expect(k.of(key(i))?.seqs.get(`s-${i}`), key(i)).toBe(i);
  for (let i = 1000; i < 17_384; i++) k.learn(key(i), `s-${i}`, i, []);
  expect(k.of(key(0))).toBeUndefined();
  expect(k.of(key(17_383))?.seqs.get("s-17383")).toBe(17_383);
});
