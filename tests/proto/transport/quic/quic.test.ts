// iSCP over QUIC (@matrixai/quic, ALPN "iscp"): our client against the broker, small volumes.
import type dgram from "node:dgram";
import { readFileSync } from "node:fs";
import { native } from "@matrixai/quic";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIscpQuic } from "../../../../cloud/iscp/broker/broker.js";
import { QoS, ResultCode, type Encoding } from "../../../../proto/wire/message.js";
import { IscpClient } from "../../../../runtime/iscp/iscp-client.js";
import type { ReceivedChunk } from "../../../../runtime/iscp/downstream.js";
import { connectQuic } from "../../../../proto/transport/quic/client.js";
import { connectWebSocket } from "../../../../proto/transport/ws/client.js";
import { makeLocalhostCert, startTestBroker, TOKEN, waitFor, type TestBroker } from "../../../support/iscp-broker.js";

describe("iSCP over QUIC", () => {
  let key: string;
  let cert: string;
  let b: TestBroker;
  let quic: Awaited<ReturnType<typeof startIscpQuic>>;

  beforeAll(async () => {
    ({ key, cert } = makeLocalhostCert());
    b = await startTestBroker();
    // QUIC shares the WebSocket broker's hub, so streams relay across transports.
    quic = await startIscpQuic({ ...b.broker.options, broker: b.broker, key, cert });
  });
  afterAll(async () => {
    await b.close();
  });

  const overQuic =
    (encoding: Encoding = "proto") =>
    () =>
      connectQuic({ host: "127.0.0.1", port: quic.port, ca: cert, serverName: "localhost", encoding });

  it("gives its UDP socket 4 MiB buffers (or the kernel's cap): with the default, bulk sends lost packets", async () => {
    const t = await overQuic()();
    try {
      // The same reach into @matrixai/quic's internals as proto/transport/quic/patches/udp.ts: this fails if they move.
      const udp = (t as unknown as { client: { socket: { socket: dgram.Socket } } }).client.socket.socket;
      const cap = (file: string) => Math.min(4 * 1024 * 1024, Number(readFileSync(file, "utf8")));
      expect(udp.getRecvBufferSize()).toBeGreaterThanOrEqual(cap("/proc/sys/net/core/rmem_max"));
      expect(udp.getSendBufferSize()).toBeGreaterThanOrEqual(cap("/proc/sys/net/core/wmem_max"));
    } finally {
      t.close();
    }
  });

  it("receives under a light lock instead of @matrixai/quic's timed one (the per-packet cost of QUIC's CPU)", async () => {
    const t = await overQuic()();
    try {
      // The same reach as proto/transport/quic/patches/recv-lock.ts: this fails if the library's recvLock moves.
      const lock = (t as unknown as { client: { connection: { recvLock: { withF: unknown } } } }).client.connection
        .recvLock;
      expect(lock.constructor.name).toBe("Object");
      expect(typeof lock.withF).toBe("function");
    } finally {
      t.close();
    }
  });

  it("sends packets of up to 16,383 bytes to a loopback server (lo has no path MTU), and large points arrive whole", async () => {
    const wsDown = await IscpClient.connect({
      transport: () => connectWebSocket({ url: b.url }),
      token: TOKEN,
      nodeId: "viewer-big",
    });
    const up = await IscpClient.connect({ transport: overQuic(), token: TOKEN, nodeId: "edge-big" });
    const got: ReceivedChunk[] = [];
    const ds = await wsDown.openDownstream({
      filters: [{ sourceNodeId: "edge-big", dataFilters: [{ name: "#", type: "#" }] }],
    });
    ds.onChunk((ch) => got.push(ch));
    const us = await up.openUpstream({ sessionId: "s", qos: QoS.RELIABLE });
    const payloads = Array.from({ length: 4 }, (_, i) => new Uint8Array(256 * 1024).map((_, j) => (i * 7 + j) & 0xff));
    for (const [i, payload] of payloads.entries()) {
      us.write({ name: "big", type: "bytes" }, [{ elapsedTime: i + 1, payload }]);
      us.flush();
    }
    expect(await us.waitAcked(20_000)).toBe(true);
    await waitFor(() => got.length === 4, 30_000, "relayed large points");
    expect(
      got.map((c) =>
        Buffer.compare(Buffer.from(c.groups[0]!.dataPoints[0]!.payload), Buffer.from(payloads[c.sequenceNumber - 1]!)),
      ),
    ).toEqual([0, 0, 0, 0]);
    // The same reach into @matrixai/quic's internals as the transport: quiche's own packet counters.
    const stats = (
      up.transport as unknown as { client: { connection: { conn: { stats(): { sent: number; sentBytes: number } } } } }
    ).client.connection.conn.stats();
    // With the default no packet exceeds 1,350 bytes, so neither could their average (acks included here).
    expect(stats.sentBytes / stats.sent).toBeGreaterThan(4_000);
    // And reads a stream a packet's worth at a time (the library's default is 4 KiB).
    expect(
      (up.transport as unknown as { client: { connection: { config: { readableChunkSize: number } } } }).client
        .connection.config.readableChunkSize,
    ).toBe(16 * 1024);
    await Promise.all([up.close(), wsDown.close()]);
  }, 120_000);

  it("acknowledges a burst with far fewer packets than it carried: receives do not wait for each other's drain", async () => {
    const up = await IscpClient.connect({ transport: overQuic(), token: TOKEN, nodeId: "edge-burst" });
    const us = await up.openUpstream({ sessionId: "burst", qos: QoS.RELIABLE });
    const stats = () =>
      (
        up.transport as unknown as { client: { connection: { conn: { stats(): { sent: number; recv: number } } } } }
      ).client.connection.conn.stats();
    const before = stats();
    for (let i = 0; i < 16; i++) {
      us.write({ name: "burst", type: "bytes" }, [{ elapsedTime: i + 1, payload: new Uint8Array(256 * 1024).fill(i) }]);
      us.flush();
    }
    expect(await us.waitAcked(20_000)).toBe(true);
    const after = stats();
    const sent = after.sent - before.sent;
    const received = after.recv - before.recv;
    // 4 MiB leave in ~260 packets of up to 16 KiB. A broker that handled one packet per event-loop turn answered
    // each with an ACK of its own (received ~ sent); packets that share a turn share one.
    expect(sent).toBeGreaterThan(200);
    expect(received).toBeLessThan(sent / 2);
    await up.close();
  }, 120_000);

  it("sends packets straight to its UDP socket, and hands one the socket refuses to the library's path", async () => {
    const up = await IscpClient.connect({ transport: overQuic(), token: TOKEN, nodeId: "edge-direct" });
    const us = await up.openUpstream({ sessionId: "direct", qos: QoS.RELIABLE });
    // The same reach as proto/transport/quic/patches/direct-send.ts: the QUICSocket's promisified send and its dgram socket.
    const socket = (
      up.transport as unknown as {
        client: { socket: { send_: (...a: unknown[]) => Promise<void>; socket: dgram.Socket } };
      }
    ).client.socket;
    const libraryPath = socket.send_.bind(socket);
    let viaLibrary = 0;
    socket.send_ = (...a: unknown[]) => (viaLibrary++, libraryPath(...a));
    const write = async (i: number) => {
      us.write({ name: "direct", type: "bytes" }, [{ elapsedTime: i, payload: new Uint8Array(64 * 1024).fill(i) }]);
      us.flush();
      expect(await us.waitAcked(20_000)).toBe(true);
    };
    await write(1);
    expect(viaLibrary).toBe(0);
    const udpSend = socket.socket.send;
    let refused = 0;
    socket.socket.send = ((...a: unknown[]) => {
      socket.socket.send = udpSend;
      refused++;
      (a[a.length - 1] as (e: Error) => void)(Object.assign(new Error("send EHOSTUNREACH"), { code: "EHOSTUNREACH" }));
    }) as typeof udpSend;
    await write(2);
    expect(refused).toBe(1);
    expect(viaLibrary).toBe(1);
    await up.close();
  }, 120_000);

  it("routes an established connection's packets on both ends without the library's header parsing", async () => {
    const up = await IscpClient.connect({ transport: overQuic(), token: TOKEN, nodeId: "edge-route" });
    const us = await up.openUpstream({ sessionId: "route", qos: QoS.RELIABLE });
    // The library's routing parses every packet's header here; broker and client share this process.
    const quiche = native.quiche as unknown as { Header: { fromSlice: (...a: unknown[]) => unknown } };
    const header = quiche.Header;
    let parsed = 0;
    quiche.Header = { fromSlice: (...a: unknown[]) => (parsed++, header.fromSlice(...a)) };
    try {
      us.write({ name: "route", type: "bytes" }, [{ elapsedTime: 1, payload: new Uint8Array(1024 * 1024).fill(7) }]);
      us.flush();
      expect(await us.waitAcked(20_000)).toBe(true);
    } finally {
      quiche.Header = header;
    }
    const stats = (
      up.transport as unknown as { client: { connection: { conn: { stats(): { sent: number; recv: number } } } } }
    ).client.connection.conn.stats();
    expect(stats.sent + stats.recv).toBeGreaterThan(64);
    expect(parsed).toBe(0);
    await up.close();
  }, 120_000);

  it("coalesces the library's drains of its connection into one per event-loop turn", async () => {
    const t = await overQuic()();
    try {
      // The same reach as proto/transport/quic/patches/send-batch.ts: this fails if the library's send moves.
      // The library's send is a prototype method; the coalescing one is the connection's own.
      const conn = (t as unknown as { client: { connection: object } }).client.connection;
      expect(Object.hasOwn(conn, "send")).toBe(true);
      expect(typeof Object.getPrototypeOf(conn).send).toBe("function");
    } finally {
      t.close();
    }
  });

  it("relays points from a QUIC upstream to WebSocket and QUIC downstreams (proto and json)", async () => {
    const wsDown = await IscpClient.connect({
      transport: () => connectWebSocket({ url: b.url }),
      token: TOKEN,
      nodeId: "viewer",
    });
    const qDown = await IscpClient.connect({ transport: overQuic("json"), token: TOKEN, nodeId: "viewer-q" });
    const up = await IscpClient.connect({ transport: overQuic(), token: TOKEN, nodeId: "edge-q" });
    expect(up.transport.kind).toBe("quic");
    const got: Record<string, ReceivedChunk[]> = { ws: [], quic: [] };
    for (const [name, c] of [
      ["ws", wsDown],
      ["quic", qDown],
    ] as const) {
      const ds = await c.openDownstream({
        filters: [{ sourceNodeId: "edge-q", dataFilters: [{ name: "#", type: "#" }] }],
      });
      ds.onChunk((ch) => got[name]!.push(ch));
    }
    const us = await up.openUpstream({ sessionId: "s", qos: QoS.RELIABLE });
    await up.sendBaseTime({ sessionId: "s", name: "manual", priority: 1, elapsedTime: 0n, baseTime: 1n });
    for (let i = 1; i <= 20; i++) {
      us.write({ name: "v", type: "u8" }, [{ elapsedTime: i, payload: new Uint8Array(16).fill(i) }]);
      us.flush();
    }
    expect(await us.waitAcked(10_000)).toBe(true);
    await waitFor(() => got.ws!.length === 20 && got.quic!.length === 20, 30_000, "relayed chunks");
    for (const list of Object.values(got)) {
      expect(list.map((c) => c.sequenceNumber)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const p = list[19]!.groups[0]!.dataPoints[0]!;
      expect([p.elapsedTime, [...p.payload]]).toEqual([20n, Array(16).fill(20)]);
    }
    await Promise.all([up.close(), wsDown.close(), qDown.close()]);
  }, 120_000);

  it("refuses a bad token with AUTH_FAILED", async () => {
    await expect(IscpClient.connect({ transport: overQuic(), token: "wrong", nodeId: "x" })).rejects.toMatchObject({
      resultCode: ResultCode.AUTH_FAILED,
    });
  });

  it("resumes an upstream after the QUIC connection is dropped", async () => {
    const up = await IscpClient.connect({ transport: overQuic(), token: TOKEN, nodeId: "edge-r", reconnectBaseMs: 50 });
    const us = await up.openUpstream({ sessionId: "s", qos: QoS.RELIABLE });
    us.write({ name: "v", type: "u8" }, [{ elapsedTime: 1, payload: new Uint8Array([1]) }]);
    us.flush();
    expect(await us.waitAcked()).toBe(true);
    up.transport.terminate();
    await waitFor(() => up.reconnects === 1 && up.state === "open", 30_000, "reconnect");
    us.write({ name: "v", type: "u8" }, [{ elapsedTime: 2, payload: new Uint8Array([2]) }]);
    expect(us.flush()).toBe(2);
    expect(await us.waitAcked()).toBe(true);
    expect(b.broker.hub.upstreams.get(us.streamId)?.lastSequenceNumber).toBe(2);
    await up.close();
  }, 120_000);
});
