// The light receive lock swapped into @matrixai/quic connections: receives start in call order without
// waiting for the previous one's drain, a failure does not block the next, and receives begun under the
// library's lock finish first.
import { describe, expect, it } from "vitest";
import { lightenRecvLock } from "../../../../../proto/transport/quic/patches/recv-lock.js";

type WithF = { recvLock: { withF<T>(f: () => Promise<T>): Promise<T> } };
const tick = () => new Promise((r) => setTimeout(r, 2));

/** The part of @matrixai/async-locks' Lock the swap relies on (isLocked, waitForUnlock, withF). */
class Lock {
  private held: Promise<void> | undefined;
  isLocked(): boolean {
    return this.held !== undefined;
  }
  async waitForUnlock(): Promise<void> {
    while (this.held) await this.held;
  }
  async withF<T>(f: () => Promise<T>): Promise<T> {
    await this.waitForUnlock();
    let done!: () => void;
    this.held = new Promise((r) => (done = r));
    try {
      return await f();
    } finally {
      this.held = undefined;
      done();
    }
  }
}

describe("lightenRecvLock", () => {
  it("starts receives in call order without waiting for the previous one's drain, past a failure", async () => {
    const conn = { recvLock: new Lock() } as unknown as WithF & {
      recvLock: { isLocked(): boolean; waitForUnlock(): Promise<void> };
    };
    lightenRecvLock(conn);
    const log: string[] = [];
    // Like the library's receive: a synchronous hand-over to quiche, then an awaited drain.
    const recv = (name: string, fail = false) =>
      conn.recvLock.withF(async () => {
        log.push(`${name} handed over`);
        await tick();
        log.push(`${name} drained`);
        if (fail) throw new Error(name);
      });
    const pending = [recv("a"), recv("b", true), recv("c")];
    expect(conn.recvLock.isLocked()).toBe(true);
    const all = await Promise.allSettled(pending);
    expect(all.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(log).toEqual(["a handed over", "b handed over", "c handed over", "a drained", "b drained", "c drained"]);
    expect(conn.recvLock.isLocked()).toBe(false);
    await conn.recvLock.waitForUnlock();
  });

  it("lets a receive that holds the library's lock finish before the first under the light one", async () => {
    const old = new Lock();
    const conn = { recvLock: old } as unknown as WithF;
    const log: string[] = [];
    const before = old.withF(async () => {
      log.push("old+");
      await tick();
      log.push("old-");
    });
    await Promise.resolve();
    lightenRecvLock(conn);
    await conn.recvLock.withF(async () => void log.push("new"));
    await before;
    expect(log).toEqual(["old+", "old-", "new"]);
  });
});
