// The stream walk swapped into @matrixai/quic connections (proto/transport/quic/patches/stream-scan.ts), against a stand-in with
// the library's shape: its processStreams reads `conn.readable()` and `conn.writable()`, its send is the drain.
// tests/proto/transport/quic/quic.test.ts runs the same swap on real connections.
import { describe, expect, it } from "vitest";
import { events } from "@matrixai/quic";
import { lightenStreamScan } from "../../../../../proto/transport/quic/patches/stream-scan.js";

const turn = () => new Promise<void>((r) => setImmediate(r));

function standIn(type: "client" | "server" = "client") {
  const log: string[] = [];
  const listeners = new Map<string, () => void>();
  const native = {
    readableNow: false,
    peerClosed: false,
    capacity: new Map<number, number | Error>(),
    nativeLists: 0,
    readable() {
      this.nativeLists++;
      return [7, 11][Symbol.iterator]();
    },
    writable() {
      this.nativeLists++;
      return [2][Symbol.iterator]();
    },
    isReadable() {
      return this.readableNow;
    },
    streamCapacity(id: number) {
      const c = this.capacity.get(id) ?? 0;
      if (c instanceof Error) throw c;
      return c;
    },
    isClosed: () => false,
    isDraining: () => false,
    peerError() {
      return this.peerClosed ? { isApp: true, errorCode: 0 } : null;
    },
  };
  const connection = {
    conn: native,
    type,
    streamMap: new Map<number, unknown>(),
    failWalk: false,
    processStreams(this: { conn: typeof native; failWalk: boolean }) {
      if (this.failWalk) throw new Error("InvalidStreamState(3)");
      log.push(`walk r=${[...this.conn.readable()].join(",")} w=${[...this.conn.writable()].join(",")}`);
    },
    async send() {
      log.push("drain");
    },
    addEventListener(name: string, f: () => void) {
      listeners.set(name, f);
    },
  };
  expect(lightenStreamScan(connection)).toBe(true);
  return { connection, native, log, stop: () => listeners.get(events.EventQUICConnectionStop.name)?.() };
}

describe("lightenStreamScan", () => {
  it("walks the streams once per event-loop turn, however many packets arrived in it", async () => {
    const { connection, log } = standIn();
    connection.processStreams();
    connection.processStreams();
    connection.processStreams();
    expect(log).toEqual([]);
    await turn();
    expect(log).toEqual(["walk r= w="]);
    await turn();
    expect(log).toHaveLength(1);
  });

  it("asks quiche for its readable list only when it says a stream is readable", async () => {
    const { connection, native, log } = standIn();
    connection.processStreams();
    await turn();
    expect(native.nativeLists).toBe(0);
    native.readableNow = true;
    connection.processStreams();
    await turn();
    expect(log[1]).toBe("walk r=7,11 w=");
    expect(native.nativeLists).toBe(1);
  });

  it("lists as writable the known streams it may write that have room or that the peer stopped", async () => {
    const { connection, native, log } = standIn("client");
    for (const id of [0, 2, 3, 4, 6, 8]) connection.streamMap.set(id, {});
    native.capacity.set(2, 1200); // our uni stream, room
    native.capacity.set(6, 0); // our uni stream, full
    native.capacity.set(3, 5000); // the server's uni stream: never ours to write
    native.capacity.set(0, new Error("StreamStopped(7)")); // stopped by the peer: write() reports it
    native.capacity.set(4, new Error("InvalidStreamState(4)")); // gone from quiche
    native.capacity.set(8, 10); // a bidi stream with room
    connection.processStreams();
    await turn();
    expect(log).toEqual(["walk r= w=0,2,8"]);
    expect(native.nativeLists).toBe(0);
  });

  it("on a server, the client's uni streams are the ones never written", async () => {
    const { connection, native, log } = standIn("server");
    for (const id of [2, 3]) {
      connection.streamMap.set(id, {});
      native.capacity.set(id, 100);
    }
    connection.processStreams();
    await turn();
    expect(log).toEqual(["walk r= w=3"]);
  });

  it("leaves quiche's own lists to callers outside the walk (the library's stop path)", () => {
    const { connection, native } = standIn();
    expect([...connection.conn.readable()]).toEqual([7, 11]);
    expect([...connection.conn.writable()]).toEqual([2]);
    expect(native.nativeLists).toBe(2);
  });

  it("walks a pending walk before the next drain, and a drain that reports the peer's close waits a turn after it", async () => {
    const { connection, native, log } = standIn();
    connection.processStreams();
    await connection.send();
    expect(log).toEqual(["walk r= w=", "drain"]);
    await turn();
    expect(log).toHaveLength(2);
    native.peerClosed = true;
    connection.processStreams();
    const drained = connection.send();
    expect(log).toEqual(["walk r= w=", "drain", "walk r= w="]);
    await Promise.resolve();
    expect(log).toHaveLength(3);
    await drained;
    expect(log).toEqual(["walk r= w=", "drain", "walk r= w=", "drain"]);
  });

  it("throws a walk's failure, unless the connection has begun to stop", async () => {
    const { connection, stop } = standIn();
    connection.failWalk = true;
    connection.processStreams();
    expect(() => connection.send()).toThrow("InvalidStreamState(3)");
    connection.processStreams();
    stop();
    await expect(connection.send()).resolves.toBeUndefined();
  });
});
