// The buffer pool behind large frames, stored chunks and payloads: blocks are reused only after they came
// back, only blocks it handed out come back, it keeps no more idle memory than it was told, and it lets go of
// idle blocks the traffic stopped needing.
import { describe, expect, it } from "vitest";
import { BufferPool, POOLED_MIN, sizeClass } from "../../../proto/wire/buffer-pool.js";

describe("BufferPool", () => {
  it("sizes blocks in quarter steps between powers of two", () => {
    expect([65536, 65537, 81920, 81921, 1048576, 1048577, 1100000].map(sizeClass)).toEqual([
      65536, 81920, 81920, 98304, 1048576, 1310720, 1310720,
    ]);
  });

  it("hands a block out again only after it came back, and takes back only its own blocks, once", () => {
    const pool = new BufferPool();
    const a = pool.take(100_000);
    const b = pool.take(100_000);
    expect(a.length).toBe(100_000);
    expect(a.buffer === b.buffer).toBe(false);
    pool.give(a.subarray(10, 20)); // any view of the block
    expect(pool.idleBytes).toBe(sizeClass(100_000));
    pool.give(a); // twice: ignored
    pool.give(Buffer.allocUnsafeSlow(sizeClass(100_000))); // not the pool's
    expect(pool.idleBytes).toBe(sizeClass(100_000));
    const c = pool.take(110_000); // same class (114,688 bytes)
    expect(c.buffer === a.buffer).toBe(true);
    expect(pool.idleBytes).toBe(0);
    const small = pool.take(POOLED_MIN - 1);
    pool.give(small);
    expect(pool.idleBytes).toBe(0);
  });

  it("keeps at most its idle limit", () => {
    const pool = new BufferPool(3 * 131072);
    const blocks = Array.from({ length: 5 }, () => pool.take(131072));
    for (const b of blocks) pool.give(b);
    expect(pool.idleBytes).toBe(3 * 131072);
  });

  it("lets go of the idle blocks no take needed since the last trim, so idle memory follows the traffic", () => {
    const pool = new BufferPool(64 * 1024 * 1024, 0);
    const size = (n: number) => Array.from({ length: n }, () => pool.take(200_000));
    // A burst of 8 blocks, then traffic that needs 2 at a time.
    for (const b of size(8)) pool.give(b);
    const other = pool.take(1_000_000); // another size class, then never again
    pool.give(other);
    pool.trim(); // the burst needed them all
    expect(pool.idleBytes).toBe(8 * sizeClass(200_000) + sizeClass(1_000_000));
    for (let i = 0; i < 50; i++) for (const b of size(2)) pool.give(b);
    pool.trim();
    // 6 of the 8 stayed idle through the interval, and the other class was not used: both let go.
    expect(pool.idleBytes).toBe(2 * sizeClass(200_000));
    for (let i = 0; i < 50; i++) for (const b of size(2)) pool.give(b);
    pool.trim();
    expect(pool.idleBytes).toBe(2 * sizeClass(200_000)); // what the traffic needs stays
    pool.trim(); // an interval without traffic
    expect(pool.idleBytes).toBe(0);
    const again = pool.take(200_000); // a later take gets a new block
    expect(again.length).toBe(200_000);
  });
});
