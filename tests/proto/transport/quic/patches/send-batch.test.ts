// Coalesced drains of a @matrixai/quic connection: one drain per event-loop turn, awaited by every caller.
import { describe, expect, it } from "vitest";
import { coalesceSends, flushSends } from "../../../../../proto/transport/quic/patches/send-batch.js";

/** A stand-in with the library's shape: `send()` drains, and may fail. */
function connection() {
  const c = {
    drains: 0,
    failNext: false,
    async send(): Promise<void> {
      c.drains++;
      if (c.failNext) {
        c.failNext = false;
        throw new Error("native send failed");
      }
    },
  };
  return c;
}

describe("coalesceSends", () => {
  it("runs one drain for the calls of one turn, after the turn, and every caller awaits it", async () => {
    const c = connection();
    coalesceSends(c);
    const calls = [c.send(), c.send(), c.send()];
    expect(c.drains).toBe(0);
    await Promise.all(calls);
    expect(c.drains).toBe(1);
    await c.send();
    expect(c.drains).toBe(2);
  });

  it("gives a call made during a drain a drain of its own", async () => {
    const c = connection();
    const own = c.send;
    let inner: Promise<void> | undefined;
    c.send = async () => {
      await own();
      inner ??= c.send(); // the library's send can lead to another send (a stream event)
    };
    coalesceSends(c);
    await c.send();
    await inner;
    expect(c.drains).toBe(2);
  });

  it("hands a failed drain to every caller that awaited it, and recovers for the next turn", async () => {
    const c = connection();
    coalesceSends(c);
    c.failNext = true;
    const results = await Promise.allSettled([c.send(), c.send()]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    await expect(c.send()).resolves.toBeUndefined();
    expect(c.drains).toBe(2);
  });

  it("flushes at once when asked (before a close), and a drain after the connection stopped has nothing to do", async () => {
    const c = connection();
    coalesceSends(c);
    const flushed = flushSends(c);
    expect(c.drains).toBe(1); // now, not after the turn
    await flushed;
    // The library's guard throws synchronously once the connection stopped: callers see a finished drain.
    const stopped = {
      send(): Promise<void> {
        throw Object.assign(new Error(""), { name: "ErrorQUICConnectionNotRunning" });
      },
    };
    coalesceSends(stopped);
    await expect(stopped.send()).resolves.toBeUndefined();
    await expect(flushSends(stopped)).resolves.toBeUndefined();
    // Never coalesced: nothing to flush.
    await expect(flushSends({})).resolves.toBeUndefined();
  });

  it("leaves an object without a send alone", () => {
    const o: { send?: unknown } = {};
    coalesceSends(o);
    expect(o.send).toBeUndefined();
  });
});
