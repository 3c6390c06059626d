// Stored chunks encoded straight to iSCP frames (proto/wire/chunk-frame.ts) give the bytes protobufjs
// gives for the same chunk built as objects (the former send path, kept here as the reference), and
// travel through a real broker: aliases after the first ack, enc=json, a resume re-sending unacked chunks.
import Long from "long";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toBigInt, toLong } from "../../../proto/wire/long.js";
import type { MessageTransport } from "../../../proto/transport/message-transport.js";
import { decodeMessage, encodeMessage, iscp2, QoS, ResultCode } from "../../../proto/wire/message.js";
import type { DataPoint } from "../../../runtime/datapoint.js";
import { encodeUpstreamChunkMessage } from "../../../proto/wire/chunk-frame.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import type { ReceivedChunk } from "../../../runtime/iscp/downstream.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { chunkGroups, chunkView, decodeChunk, encodeChunk } from "../../../runtime/queue/chunk-codec.js";
import type { ChunkView } from "../../../proto/wire/chunk-view.js";
import { startTestBroker, TOKEN, waitFor, type TestBroker } from "../../support/iscp-broker.js";

type AliasOf = (name: string, type: string) => number | undefined;

/** The former path: chunkGroups -> per-point objects with Long elapsed times -> protobufjs. */
function objectPathFrame(v: ChunkView, streamIdAlias: number, sequenceNumber: number, aliasOf: AliasOf): Uint8Array {
  const groups: iscp2.IDataPointGroup[] = [];
  const ask: iscp2.IDataID[] = [];
  for (const g of chunkGroups(decodeChunk(v.buffer))) {
    const dataPoints = g.points.map((p) => ({ elapsedTime: toLong(Math.trunc(p.elapsedNs)), payload: p.payload }));
    const a = aliasOf(g.dataId.name, g.dataId.type);
    if (a) groups.push({ dataIdAlias: a, dataPoints });
    else {
      groups.push({ dataId: { name: g.dataId.name, type: g.dataId.type }, dataPoints });
      ask.push({ name: g.dataId.name, type: g.dataId.type });
    }
  }
  return encodeMessage(
    { upstreamChunk: { streamIdAlias, streamChunk: { sequenceNumber, dataPointGroups: groups }, dataIds: ask } },
    "proto",
  );
}

/** Deterministic PRNG (mulberry32), so a failure can be replayed. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A decoded message with Longs and bytes as strings (deep equality over large byte arrays is slow). */
function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex");
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Long) return `${v.toString()}${v.unsigned ? "u" : ""}`;
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

const EDGES = [
  0,
  -0,
  1,
  -1,
  63,
  -64,
  64,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 31 + 1,
  -(2 ** 31) - 1,
  -(2 ** 31),
  -(2 ** 31) + 1,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 32 + 1,
  -(2 ** 32),
  2 ** 49 - 1,
  2 ** 49,
  2 ** 52 + 1,
  -(2 ** 52) - 1,
  2 ** 53 - 1,
  -(2 ** 53 - 1),
  2 ** 53,
  -(2 ** 53),
  2 ** 56,
  -(2 ** 55),
  1.9,
  -1.9,
  -(2 ** 31) - 0.5,
  1.7000000001234568e18,
];
const NAMES = [
  ["a", "float64"],
  ["b/c", "bytes"],
  ["名前/ü", "string"],
  ["", ""],
  ["x".repeat(300), "t"],
  ["dup", "t1"],
  ["dup", "t2"],
] as const;

function randomChunk(r: () => number, n: number): DataPoint[] {
  const ids = NAMES.slice(0, 1 + Math.floor(r() * NAMES.length));
  return Array.from({ length: n }, () => {
    const [name, type] = ids[Math.floor(r() * ids.length)]!;
    const pick = r();
    const elapsedNs =
      pick < 0.4
        ? EDGES[Math.floor(r() * EDGES.length)]!
        : pick < 0.7
          ? Math.floor((r() - 0.5) * 2 ** 40)
          : Math.floor(r() * 3.6e12);
    const size = r() < 0.1 ? 0 : r() < 0.01 ? 70_000 : Math.floor(r() * 80);
    const payload = Buffer.alloc(size, Math.floor(r() * 256));
    for (let i = 0; i < Math.min(size, 80); i++) payload[i] = Math.floor(r() * 256);
    return { name, type, payload, elapsedNs, srcId: "" };
  });
}

describe("encodeUpstreamChunkMessage", () => {
  it("gives the object path's bytes for random chunks, aliases known for some data ids and not others", () => {
    const r = rng(7);
    for (let round = 0; round < 300; round++) {
      const c = chunkView(encodeChunk(randomChunk(r, 1 + Math.floor(r() * 200))));
      const aliases = new Map<string, number>();
      for (const { dataId: id } of c.groups)
        if (r() < 0.5) aliases.set(`${id.type}\0${id.name}`, 1 + Math.floor(r() * 2 ** 20));
      const aliasOf: AliasOf = (name, type) => aliases.get(`${type}\0${name}`);
      const streamIdAlias = Math.floor(r() * 2 ** 32);
      const seq = Math.floor(r() * 2 ** 32);
      const { frame, points, askIds } = encodeUpstreamChunkMessage(c, { streamIdAlias, sequenceNumber: seq, aliasOf });
      const ref = objectPathFrame(c, streamIdAlias, seq, aliasOf);
      expect(Buffer.from(frame).equals(Buffer.from(ref)), `round ${round}`).toBe(true);
      expect(plain(decodeMessage(frame, "proto"))).toEqual(plain(decodeMessage(ref, "proto")));
      expect(points).toBe(c.count);
      expect(askIds).toEqual(c.groups.map((g) => g.dataId).filter((id) => !aliasOf(id.name, id.type)));
    }
  });

  it("writes every elapsed time within ±2^53 exactly as sint64, and out-of-range ones as protobufjs's Long does", () => {
    const odd = [NaN, Infinity, -Infinity, 1e19, -1e19, 2 ** 63, -(2 ** 63), 2 ** 62 + 2 ** 40, -(2 ** 62) - 2 ** 12];
    const all = [...EDGES, ...odd];
    const c = chunkView(
      encodeChunk(
        all.map((elapsedNs, i) => ({ name: "t", type: "int", payload: Buffer.from([i]), elapsedNs, srcId: "" })),
      ),
    );
    const { frame } = encodeUpstreamChunkMessage(c, { streamIdAlias: 1, sequenceNumber: 1, aliasOf: () => undefined });
    expect(Buffer.from(frame).equals(Buffer.from(objectPathFrame(c, 1, 1, () => undefined)))).toBe(true);
    const got = decodeMessage(frame, "proto").upstreamChunk!.streamChunk!.dataPointGroups![0]!.dataPoints!.map((p) =>
      toBigInt(p.elapsedTime),
    );
    expect(got.slice(0, EDGES.length)).toEqual(EDGES.map((v) => BigInt(Math.trunc(v))));
    expect(got.slice(EDGES.length)).toEqual([
      0n,
      2n ** 63n - 1n,
      -(2n ** 63n),
      2n ** 63n - 1n,
      -(2n ** 63n),
      2n ** 63n - 1n,
      -(2n ** 63n),
      2n ** 62n + 2n ** 40n,
      -(2n ** 62n) - 2n ** 12n,
    ]);
  });

  it("sends 64 KiB payloads, empty payloads and a chunk of one data id with thousands of points", () => {
    const big = Buffer.alloc(65536, 7);
    const pts: DataPoint[] = [
      { name: "big", type: "bytes", payload: big, elapsedNs: 5, srcId: "" },
      { name: "e", type: "bytes", payload: Buffer.alloc(0), elapsedNs: -5, srcId: "" },
    ];
    for (let i = 0; i < 4096; i++)
      pts.push({ name: "s", type: "float64", payload: Buffer.alloc(16, i), elapsedNs: i * 1e6, srcId: "" });
    const c = chunkView(encodeChunk(pts));
    const aliasOf: AliasOf = (name) => (name === "s" ? 3 : undefined);
    const { frame, askIds } = encodeUpstreamChunkMessage(c, { streamIdAlias: 9, sequenceNumber: 77, aliasOf });
    expect(Buffer.from(frame).equals(Buffer.from(objectPathFrame(c, 9, 77, aliasOf)))).toBe(true);
    expect(askIds.map((id) => id.name)).toEqual(["big", "e"]);
    const m = decodeMessage(frame, "proto").upstreamChunk!;
    expect(m.streamChunk!.dataPointGroups!.map((g) => [g.dataId?.name ?? g.dataIdAlias, g.dataPoints!.length])).toEqual(
      [
        ["big", 1],
        ["e", 1],
        [3, 4096],
      ],
    );
    expect(Buffer.from(m.streamChunk!.dataPointGroups![0]!.dataPoints![0]!.payload!).equals(big)).toBe(true);
  });
});

const NODE_U = "11111111-1111-4111-8111-111111111111";
const NODE_D = "22222222-2222-4222-8222-222222222222";

describe("ClientUpstream.writeStoredChunk through a broker", () => {
  let b: TestBroker;
  const clients: IscpClient[] = [];
  beforeEach(async () => {
    b = await startTestBroker();
  });
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await b.close();
  });

  /** A client whose outgoing frames are recorded. */
  async function client(
    nodeId: string,
    encoding: "proto" | "json" = "proto",
    sent: Uint8Array[] = [],
  ): Promise<IscpClient> {
    const c = await IscpClient.connect({
      token: TOKEN,
      nodeId,
      reconnectBaseMs: 20,
      transport: async (): Promise<MessageTransport> => {
        const t = await connectWebSocket({ url: b.url, encoding });
        const send = t.send.bind(t);
        t.send = (f) => {
          sent.push(f);
          send(f);
        };
        return t;
      },
    });
    clients.push(c);
    return c;
  }

  async function reader(): Promise<ReceivedChunk[]> {
    const d = await client(NODE_D);
    const ds = await d.openDownstream({ filters: [{ sourceNodeId: NODE_U, dataFilters: [{ name: "#", type: "#" }] }] });
    const got: ReceivedChunk[] = [];
    ds.onChunk((c) => got.push(c));
    return got;
  }

  const stored = (tag: string, n: number) =>
    chunkView(
      encodeChunk(
        Array.from({ length: n }, (_, i) => ({
          name: `${tag}/${i % 2}`,
          type: "bytes",
          payload: Buffer.from(`${tag}${i}`),
          elapsedNs: (i - 1) * 2 ** 33,
          srcId: "",
        })),
      ),
    );
  const relayed = (got: ReceivedChunk[]) =>
    got.map((c) => [
      c.sequenceNumber,
      c.groups.map((g) => [g.dataId.name, g.dataPoints.map((p) => [p.elapsedTime, Buffer.from(p.payload).toString()])]),
    ]);
  const expected = (seq: number, c: ChunkView) => [
    seq,
    chunkGroups(decodeChunk(c.buffer)).map((g) => [
      g.dataId.name,
      g.points.map((p) => [BigInt(p.elapsedNs), p.payload.toString()]),
    ]),
  ];

  for (const encoding of ["proto", "json"] as const) {
    it(`relays stored chunks, by alias once acked (enc=${encoding})`, async () => {
      const got = await reader();
      const sent: Uint8Array[] = [];
      const u = await client(NODE_U, encoding, sent);
      const us = await u.openUpstream({ sessionId: "s", qos: QoS.PARTIAL, ackIntervalMs: 0 });
      const acks: number[] = [];
      us.onAck((rs) =>
        acks.push(...rs.filter((r) => r.resultCode === ResultCode.SUCCEEDED).map((r) => r.sequenceNumber)),
      );
      const c1 = stored("a", 3);
      const c2 = stored("a", 4);
      expect(us.writeStoredChunk(5, c1)).toBe(true);
      await waitFor(() => acks.length === 1, 30_000, "first ack");
      expect(us.writeStoredChunk(9, c2)).toBe(true);
      expect(await us.waitAcked()).toBe(true);
      await waitFor(() => got.length === 2, 30_000, "relayed chunks");
      expect(acks).toEqual([5, 9]);
      expect(relayed(got)).toEqual([expected(5, c1), expected(9, c2)]);
      expect(us.totalDataPoints).toBe(7n);
      expect(us.lastSequenceNumber).toBe(9);
      const chunks = sent
        .map((f) => decodeMessage(f, encoding).upstreamChunk)
        .filter((m) => m !== undefined && m !== null);
      expect(chunks.map((m) => m.streamChunk!.dataPointGroups!.map((g) => g.dataIdAlias || g.dataId!.name))).toEqual([
        ["a/0", "a/1"],
        [1, 2],
      ]);
      expect(chunks.map((m) => (m.dataIds ?? []).length)).toEqual([2, 0]);
    });
  }

  it("reuses a large frame's buffer only once the socket has written it: chunks sent back to back arrive intact", async () => {
    const got = await reader();
    const u = await client(NODE_U);
    const us = await u.openUpstream({ sessionId: "s", qos: QoS.PARTIAL, ackIntervalMs: 0 });
    // 32 chunks of 3 x 100 KiB, each byte telling its chunk and point: pooled frames (> 64 KiB) reused too early would mix them.
    const big = (k: number) =>
      chunkView(
        encodeChunk(
          Array.from({ length: 3 }, (_, i) => ({
            name: "big",
            type: "bytes",
            payload: Buffer.alloc(100 * 1024, k * 3 + i),
            elapsedNs: k * 10 + i,
            srcId: "",
          })),
        ),
      );
    const chunks = Array.from({ length: 32 }, (_, k) => big(k));
    chunks.forEach((c, k) => expect(us.writeStoredChunk(k + 1, c)).toBe(true));
    expect(await us.waitAcked()).toBe(true);
    await waitFor(() => got.length === 32, 30_000, "relayed chunks");
    const firstByte = got.map((c) =>
      c.groups.flatMap((g) => g.dataPoints.map((p) => [p.payload[0], p.payload.every((x) => x === p.payload[0])])),
    );
    expect(firstByte).toEqual(chunks.map((_, k) => [0, 1, 2].map((i) => [(k * 3 + i) & 0xff, true])));
  });

  it("RELIABLE: a chunk unacked when the transport drops is re-encoded under the resumed stream and relayed once", async () => {
    const got = await reader();
    const sent: Uint8Array[] = [];
    const u = await client(NODE_U, "proto", sent);
    // A long ack interval keeps chunk 1 unacked when the socket goes away.
    const us = await u.openUpstream({ sessionId: "s", qos: QoS.RELIABLE, ackIntervalMs: 1500 });
    const c1 = stored("r", 2);
    const c2 = stored("q", 2);
    const want = [expected(1, c1), expected(2, c2)];
    expect(us.writeStoredChunk(1, c1)).toBe(true);
    await waitFor(() => got.length === 1, 30_000, "chunk 1");
    u.transport.terminate();
    us.writeStoredChunk(2, c2); // on the dying socket or none: kept (RELIABLE) and sent after the resume
    // The caller's bytes are its own again after the call (the agent reads chunks into a reused buffer).
    c1.buffer.fill(0);
    c2.buffer.fill(0);
    await waitFor(() => u.reconnects === 1 && u.state === "open", 30_000, "reconnect");
    expect(await us.waitAcked(6000)).toBe(true);
    await waitFor(() => got.length === 2, 30_000, "chunk 2");
    await new Promise((r) => setTimeout(r, 200));
    expect(relayed(got)).toEqual(want);
    const chunks = sent
      .map((f) => decodeMessage(f, "proto").upstreamChunk)
      .filter((m) => m !== undefined && m !== null);
    expect(chunks.filter((m) => m.streamChunk!.sequenceNumber === 1).length).toBe(2);
    expect(chunks.at(-1)!.streamIdAlias).toBe(us.alias);
  }, 120_000);
});
