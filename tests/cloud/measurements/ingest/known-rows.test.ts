// The chunk writer's memory of existing rows: thousands of live upstreams (one measurement each) whose chunks
// come round in turn all stay known, so a steady stream's commit skips its sequence and data-id statements; a
// measurement whose upstream is opened again and again (each time a new stream) does not keep every stream.
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

it("keeps the streams of one measurement written last, not every stream it ever had", () => {
  const k = new KnownRows();
  const key = "m-1 2026-01-01T00:00:00Z";
  // A measurement's upstream opened 10,000 times (an agent restarted every few minutes for weeks), a chunk each;
  // one stream written all along.
  for (let i = 0; i < 10_000; i++) {
    k.learn(key, `s-${i}`, i, []);
    k.learn(key, "s-steady", 99_999, []);
  }
  const seqs = k.of(key)!.seqs;
  expect(seqs.size).toBeLessThanOrEqual(256);
  expect(seqs.get("s-steady")).toBe(99_999);
  expect(seqs.get("s-9999")).toBe(9999);
  expect(seqs.get("s-0")).toBeUndefined();
});
