// iSCP UNRELIABLE data on QUIC DATAGRAMs: the 8-byte segment header codec, and our client against the
// broker over real QUIC (@matrixai/quic; small volumes, sent slowly, some loss tolerated).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIscpQuic } from "../../../../cloud/iscp/broker/broker.js";
import {
  decodeSegment,
  encodeSegment,
  ISCP_GO_MAX_DATAGRAM_BYTES,
  segmentMessage,
  SegmentReassembler,
  SegmentSequence,
} from "../../../../proto/wire/datagram.js";
import { QuicDatagramChannel } from "../../../../proto/transport/quic/datagrams.js";
import { encodeMessage, QoS } from "../../../../proto/wire/message.js";
import { IscpClient } from "../../../../runtime/iscp/iscp-client.js";
import type { ReceivedChunk } from "../../../../runtime/iscp/downstream.js";
import { connectQuic } from "../../../../proto/transport/quic/client.js";
import { makeLocalhostCert, startTestBroker, TOKEN, waitFor, type TestBroker } from "../../../support/iscp-broker.js";

const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("datagram segment header codec", () => {
  it("encodes u32be seq, u16be max index, u16be index, payload and decodes it back", () => {
    const d = encodeSegment(
      { messageSeq: 0x01020304, maxSegmentIndex: 0x0506, segmentIndex: 0x0102 },
      Uint8Array.of(9, 8),
    );
    expect([...d]).toEqual([1, 2, 3, 4, 5, 6, 1, 2, 9, 8]);
    expect(decodeSegment(d)).toEqual({
      header: { messageSeq: 0x01020304, maxSegmentIndex: 0x0506, segmentIndex: 0x0102 },
      payload: Uint8Array.of(9, 8),
    });
  });

  it("matches iscp-rs' splitter cases (12-byte datagrams)", () => {
    const hex = (ds: Uint8Array[]) => ds.map((d) => Buffer.from(d).toString("hex"));
    expect(hex(segmentMessage(0, Uint8Array.of(0, 1, 2, 3), 12))).toEqual(["000000000000000000010203"]);
    expect(hex(segmentMessage(0, Uint8Array.of(0, 1, 2, 3, 4, 5), 12))).toEqual([
      "000000000001000000010203",
      "00000000000100010405",
    ]);
    // An exact multiple gives no empty trailing segment.
    expect(hex(segmentMessage(0, Uint8Array.of(0, 1, 2, 3, 4, 5, 6, 7), 12))).toEqual([
      "000000000001000000010203",
      "000000000001000104050607",
    ]);
  });

  it("splits a large message into datagrams of at most the given size and rebuilds it", () => {
    const msg = bytes(10_000);
    const ds = segmentMessage(7, msg, ISCP_GO_MAX_DATAGRAM_BYTES);
    expect(ds.length).toBe(Math.ceil(10_000 / 1188));
    for (const [i, d] of ds.entries()) {
      expect(d.length).toBeLessThanOrEqual(1196);
      expect(decodeSegment(d)!.header).toEqual({ messageSeq: 7, maxSegmentIndex: ds.length - 1, segmentIndex: i });
    }
    const r = new SegmentReassembler({ maxMessageBytes: 1 << 20 });
    const out = ds.map((d) => r.push(d));
    expect(out.slice(0, -1).every((m) => m === undefined)).toBe(true);
    expect(out.at(-1)).toEqual(msg);
    expect(r.stats()).toMatchObject({ messages: 1, pendingMessages: 0, pendingBytes: 0 });
  });

  it("reassembles interleaved messages whose segments arrive out of order, ignoring duplicates", () => {
    const a = bytes(3000, 1);
    const b = bytes(2500, 2);
    const ds = [...segmentMessage(1, a, 1000), ...segmentMessage(2, b, 1000)];
    // A fixed shuffle, plus a duplicate of the first datagram.
    const order = [4, 0, 6, 2, 0, 5, 3, 1];
    const r = new SegmentReassembler({ maxMessageBytes: 1 << 20 });
    const got = order.map((i) => r.push(ds[i]!)).filter((m) => m !== undefined);
    expect(got).toEqual([b, a]);
    expect(r.stats()).toMatchObject({ messages: 2, duplicates: 1, pendingMessages: 0 });
  });

  it("accepts iscp-go's empty trailing segment (message length a multiple of 1188)", () => {
    const msg = bytes(2 * 1188);
    const seg = (i: number, p: Uint8Array) => encodeSegment({ messageSeq: 3, maxSegmentIndex: 2, segmentIndex: i }, p);
    const r = new SegmentReassembler({ maxMessageBytes: 1 << 20 });
    expect(r.push(seg(2, new Uint8Array(0)))).toBeUndefined();
    expect(r.push(seg(0, msg.subarray(0, 1188)))).toBeUndefined();
    expect(r.push(seg(1, msg.subarray(1188)))).toEqual(msg);
  });

  it("drops incomplete sets after the expiry", () => {
    let now = 0;
    const r = new SegmentReassembler({ maxMessageBytes: 1 << 20, expiryMs: 10_000, now: () => now });
    const ds = segmentMessage(1, bytes(3000), 1000);
    r.push(ds[0]!);
    r.push(ds[1]!);
    expect(r.stats()).toMatchObject({ pendingMessages: 1, pendingBytes: 1984 });
    now = 10_001;
    r.push(segmentMessage(2, bytes(10), 1000)[0]!); // any later datagram prunes
    expect(r.stats()).toMatchObject({ pendingMessages: 0, pendingBytes: 0, dropped: 1, messages: 1 });
    // The late last segment starts a new set that never completes.
    expect(r.push(ds[2]!)).toBeUndefined();
    now = 20_002;
    r.prune();
    expect(r.stats()).toMatchObject({ pendingMessages: 0, dropped: 2 });
  });

  it("keeps memory bounded: oldest incomplete sets are evicted, oversized sets dropped", () => {
    const r = new SegmentReassembler({ maxMessageBytes: 5000, maxPendingMessages: 4, maxPendingBytes: 3000 });
    for (let seq = 0; seq < 100; seq++)
      r.push(encodeSegment({ messageSeq: seq, maxSegmentIndex: 65_535, segmentIndex: 0 }, bytes(500)));
    let s = r.stats();
    expect(s.pendingMessages).toBeLessThanOrEqual(4);
    expect(s.pendingBytes).toBeLessThanOrEqual(3000);
    expect(s.dropped).toBe(96);
    // A set growing past maxMessageBytes is given up.
    const big = segmentMessage(500, bytes(8000), 1008);
    for (const d of big) expect(r.push(d)).toBeUndefined();
    s = r.stats();
    expect(s.messages).toBe(0);
    expect(s.pendingBytes).toBeLessThanOrEqual(3000);
    // A single datagram above the limit is dropped too.
    expect(r.push(segmentMessage(600, bytes(6000), 7000)[0]!)).toBeUndefined();
  });

  it("rejects garbage without throwing", () => {
    const r = new SegmentReassembler({ maxMessageBytes: 1 << 16, maxPendingMessages: 8 });
    expect(r.push(new Uint8Array(0))).toBeUndefined();
    expect(r.push(Uint8Array.of(1, 2, 3, 4, 5, 6, 7))).toBeUndefined(); // shorter than the header
    expect(
      r.push(encodeSegment({ messageSeq: 1, maxSegmentIndex: 1, segmentIndex: 2 }, Uint8Array.of(1))),
    ).toBeUndefined(); // index > max
    r.push(encodeSegment({ messageSeq: 2, maxSegmentIndex: 3, segmentIndex: 0 }, Uint8Array.of(1)));
    expect(
      r.push(encodeSegment({ messageSeq: 2, maxSegmentIndex: 5, segmentIndex: 1 }, Uint8Array.of(1))),
    ).toBeUndefined(); // max index changed
    expect(r.stats().malformed).toBe(4);
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    for (let i = 0; i < 2000; i++) r.push(Uint8Array.from({ length: rand() % 40 }, rand));
    expect(r.stats().pendingMessages).toBeLessThanOrEqual(8);
  });

  it("numbers messages from 0 and wraps at 2^32", () => {
    const s = new SegmentSequence();
    expect([s.take(), s.take()]).toEqual([0, 1]);
    (s as unknown as { next: number }).next = 0xffffffff;
    expect([s.take(), s.take()]).toEqual([0xffffffff, 0]);
    expect(() => segmentMessage(0, new Uint8Array(65_537), 9)).toThrow(/65 536|65536/);
  });
});

describe("QUIC datagram channel (stand-in for the library's internal connection)", () => {
  /** The members of @matrixai/quic's QUICConnection the channel uses, with quiche's queues simulated. */
  const fakeConnection = () => {
    const f = {
      queue: [] as Uint8Array[],
      incoming: [] as Uint8Array[],
      capacity: 2048,
      sends: 0,
      conn: {
        dgramMaxWritableLen: () => 1306,
        dgramSendQueueLen: () => f.queue.length + (2048 - f.capacity),
        dgramSend: (d: Uint8Array) => void f.queue.push(d),
        dgramRecvVec: () => f.incoming.shift() ?? null,
      },
      recv: async (_data: Uint8Array, _ri: unknown) => {},
      send: async () => void f.sends++,
    };
    return f;
  };
  const channel = (f: ReturnType<typeof fakeConnection>) =>
    new QuicDatagramChannel(f as never, { maxIncomingMessageBytes: 1 << 20, maxBacklogBytes: 100_000 });

  it("segments at iscp-go's 1196 bytes, sends at once, and rebuilds what recv() brought", async () => {
    const f = fakeConnection();
    const ch = channel(f);
    const got: Uint8Array[] = [];
    ch.onMessage((m) => got.push(m));
    expect(ch.send(bytes(3000))).toBe(true);
    expect(f.queue.map((d) => d.length)).toEqual([1196, 1196, 8 + 3000 - 2 * 1188]);
    expect(f.sends).toBe(1);
    f.incoming.push(...f.queue.splice(0).reverse());
    await (f as unknown as { recv(d: Uint8Array, r: unknown): Promise<void> }).recv(new Uint8Array(0), {});
    expect(got).toEqual([bytes(3000)]);
    expect(ch.stats()).toMatchObject({ sentMessages: 1, sentDatagrams: 3, datagrams: 3, messages: 1 });
  });

  it("holds what quiche cannot take in a bounded backlog and drains it when room comes back", async () => {
    const f = fakeConnection();
    const ch = channel(f);
    let drained = 0;
    ch.onDrain(() => drained++);
    f.capacity = 0; // quiche's send queue is full
    for (let i = 0; i < 100; i++) ch.send(bytes(5000, i));
    expect(ch.pendingBytes()).toBeLessThanOrEqual(100_000);
    expect(ch.stats().sendDropped).toBe(100 - 20);
    f.capacity = 2048;
    await (f as unknown as { recv(d: Uint8Array, r: unknown): Promise<void> }).recv(new Uint8Array(0), {});
    expect(ch.pendingBytes()).toBe(0);
    expect(drained).toBe(1);
    expect(f.queue.length).toBe(20 * 5);
    ch.close();
  });

  it("reports no datagram path when the peer did not enable datagrams", () => {
    const f = fakeConnection();
    f.conn.dgramMaxWritableLen = () => null as unknown as number;
    expect(channel(f).send(bytes(10))).toBe(false);
  });
});

describe("UNRELIABLE streams on QUIC datagrams", () => {
  let cert: string;
  let b: TestBroker;
  let quic: Awaited<ReturnType<typeof startIscpQuic>>;
  const clients: IscpClient[] = [];

  beforeAll(async () => {
    const made = makeLocalhostCert();
    cert = made.cert;
    b = await startTestBroker();
    quic = await startIscpQuic({ ...b.broker.options, broker: b.broker, key: made.key, cert });
  });
  afterAll(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    // Let the broker see the closes: force-stopping live QUIC connections waits out their draining period.
    await waitFor(() => b.broker.connections().length === 0, 5000).catch(() => {});
    await b.close();
  });

  const connect = async (nodeId: string) => {
    const c = await IscpClient.connect({
      transport: () => connectQuic({ host: "127.0.0.1", port: quic.port, ca: cert, serverName: "localhost" }),
      token: TOKEN,
      nodeId,
    });
    clients.push(c);
    return c;
  };
  const serverSide = (nodeId: string) => b.broker.connections().find((c) => c.nodeId === nodeId)!.transport;

  it("carries an UNRELIABLE upstream to an UNRELIABLE downstream as datagrams, both ways through the broker", async () => {
    const down = await connect("viewer-d");
    const up = await connect("edge-d");
    const got: ReceivedChunk[] = [];
    const ds = await down.openDownstream({
      qos: QoS.UNRELIABLE,
      filters: [{ sourceNodeId: "edge-d", dataFilters: [{ name: "#", type: "#" }] }],
    });
    ds.onChunk((c) => got.push(c));
    const us = await up.openUpstream({ sessionId: "s", qos: QoS.UNRELIABLE });
    const acked: number[] = [];
    us.onAck((rs) => acked.push(...rs.map((r) => r.sequenceNumber)));
    const N = 40;
    for (let i = 1; i <= N; i++) {
      us.write({ name: "v", type: "u8" }, [{ elapsedTime: i, payload: new Uint8Array(32).fill(i) }]);
      us.flush();
      await sleep(15);
    }
    await waitFor(() => got.length >= N, 5000, "chunks").catch(() => {}); // loss is allowed, checked below
    expect(got.length).toBeGreaterThanOrEqual(Math.ceil(N * 0.9));
    for (const c of got) expect([...c.groups[0]!.dataPoints[0]!.payload]).toEqual(Array(32).fill(c.sequenceNumber));
    expect(acked.length).toBeGreaterThanOrEqual(Math.ceil(N * 0.9)); // the broker acks datagram chunks on the stream

    // The datagram path was used at every hop.
    expect(up.transport.datagramStats!()).toMatchObject({ sentMessages: N });
    expect(serverSide("edge-d").datagramStats!().messages).toBeGreaterThanOrEqual(Math.ceil(N * 0.9));
    expect(serverSide("viewer-d").datagramStats!().sentMessages).toBeGreaterThanOrEqual(Math.ceil(N * 0.9));
    expect(down.transport.datagramStats!().messages).toBe(got.length);
  }, 120_000);

  it("segments a chunk larger than a datagram and rebuilds it", async () => {
    const down = await connect("viewer-l");
    const up = await connect("edge-l");
    const got: ReceivedChunk[] = [];
    const ds = await down.openDownstream({
      qos: QoS.UNRELIABLE,
      filters: [{ sourceNodeId: "edge-l", dataFilters: [{ name: "#", type: "#" }] }],
    });
    ds.onChunk((c) => got.push(c));
    const us = await up.openUpstream({ sessionId: "s", qos: QoS.UNRELIABLE });
    const before = up.transport.datagramStats!().sentDatagrams;
    for (let i = 1; i <= 5; i++) {
      us.write({ name: "big", type: "bytes" }, [{ elapsedTime: i, payload: bytes(20_000, i) }]);
      us.flush();
      await sleep(50);
    }
    await waitFor(() => got.length >= 5, 5000, "large chunks").catch(() => {});
    expect(got.length).toBeGreaterThanOrEqual(4);
    for (const c of got) expect(c.groups[0]!.dataPoints[0]!.payload).toEqual(bytes(20_000, c.sequenceNumber));
    expect(up.transport.datagramStats!().sentDatagrams - before).toBeGreaterThanOrEqual(5 * 17); // 20 kB / 1188 B
  }, 120_000);

  it("keeps RELIABLE and PARTIAL streams on the QUIC stream", async () => {
    const down = await connect("viewer-r");
    const up = await connect("edge-r");
    const got: ReceivedChunk[] = [];
    const ds = await down.openDownstream({
      qos: QoS.RELIABLE,
      filters: [{ sourceNodeId: "edge-r", dataFilters: [{ name: "#", type: "#" }] }],
    });
    ds.onChunk((c) => got.push(c));
    for (const qos of [QoS.RELIABLE, QoS.PARTIAL]) {
      const us = await up.openUpstream({ sessionId: "s", qos });
      for (let i = 0; i < 5; i++) {
        us.write({ name: "v", type: "u8" }, [{ elapsedTime: i, payload: Uint8Array.of(i) }]);
        us.flush();
      }
      expect(await us.waitAcked(5000)).toBe(true);
    }
    await waitFor(() => got.length === 10, 30_000, "relayed chunks");
    expect(up.transport.datagramStats!().sentMessages).toBe(0);
    expect(down.transport.datagramStats!().messages).toBe(0);
  }, 120_000);

  it("gives up UNRELIABLE chunks whose datagrams were lost (onLost), so nothing waits for them", async () => {
    const up = await connect("edge-x");
    const us = await up.openUpstream({ sessionId: "s", qos: QoS.UNRELIABLE, lostAfterMs: 200 });
    const lost: number[] = [];
    us.onLost((seqs) => lost.push(...seqs));
    // Simulated network loss: the native connection swallows every datagram for a while.
    const native = (
      up.transport as unknown as { dgram: { internals: { conn: { dgramSend(d: Uint8Array): unknown } } } }
    ).dgram.internals.conn;
    const realSend = native.dgramSend;
    native.dgramSend = () => undefined;
    us.write({ name: "v", type: "u8" }, [{ elapsedTime: 1, payload: Uint8Array.of(1) }]);
    us.flush();
    us.write({ name: "v", type: "u8" }, [{ elapsedTime: 2, payload: Uint8Array.of(2) }]);
    us.flush();
    native.dgramSend = realSend;
    expect(us.unackedCount).toBe(2);
    await sleep(300);
    us.write({ name: "v", type: "u8" }, [{ elapsedTime: 3, payload: Uint8Array.of(3) }]);
    us.flush();
    expect(lost).toEqual([1, 2]);
    expect(await us.waitAcked(5000)).toBe(true);
    expect(us.unackedCount).toBe(0);
    expect(b.broker.hub.upstreams.get(us.streamId)?.lastSequenceNumber).toBe(3);
  }, 120_000);

  it("drops garbage and unexpected datagram messages without closing the connection", async () => {
    const up = await connect("edge-g");
    const t = up.transport;
    const server = serverSide("edge-g");
    t.sendUnreliable(bytes(3000)); // segmented fine, but not an iSCP message
    t.sendUnreliable(encodeMessage({ ping: { requestId: 2 } }, "proto")); // not allowed on datagrams
    // Raw datagrams with a broken header, through the channel's native connection.
    const native = (t as unknown as { dgram: { internals: { conn: { dgramSend(d: Uint8Array): unknown } } } }).dgram
      .internals.conn;
    native.dgramSend(Uint8Array.of(1, 2, 3));
    native.dgramSend(encodeSegment({ messageSeq: 99, maxSegmentIndex: 0, segmentIndex: 1 }, Uint8Array.of(1)));
    await waitFor(
      () => server.datagramStats!().malformed >= 1 && server.datagramStats!().messages >= 2,
      30_000,
      "garbage seen by the broker",
    );
    // Still open, and chunks still flow.
    const us = await up.openUpstream({ sessionId: "s", qos: QoS.UNRELIABLE });
    us.write({ name: "v", type: "u8" }, [{ elapsedTime: 1, payload: Uint8Array.of(1) }]);
    us.flush();
    expect(await us.waitAcked(5000)).toBe(true);
    expect(up.state).toBe("open");
    expect(b.broker.hub.upstreams.get(us.streamId)?.lastSequenceNumber).toBe(1);
  }, 120_000);
});
