// The light receive lock swapped into @matrixai/quic connections: one holder at a time, in call order,
// a failure does not block the next, and receives begun under the library's lock finish first.
import { describe, expect, it } from "vitest";
import { lightenRecvLock } from "../../proto/iscp/quic-recv-lock.js";

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
  it("runs receives one at a time, in call order, past a failure", async () => {
    const conn = { recvLock: new Lock() } as unknown as WithF;
    lightenRecvLock(conn);
    const log: string[] = [];
    let inside = 0;
    const recv = (name: string, fail = false) =>
      conn.recvLock.withF(async () => {
        inside++;
        expect(inside).toBe(1);
        log.push(`${name}+`);
        await tick();
        log.push(`${name}-`);
        inside--;
        if (fail) throw new Error(name);
      });
    const all = await Promise.allSettled([recv("a"), recv("b", true), recv("c")]);
    expect(all.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(log).toEqual(["a+", "a-", "b+", "b-", "c+", "c-"]);
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
