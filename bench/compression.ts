// iSCP compression (per-message DEFLATE as iscp-go and iscp-rs negotiate it): what it saves on the wire and what it
// costs in CPU and throughput, for 16 B and 1 KiB points, compression off and on in one run and like for like.
// Each setting runs the broker benchmark's case (bench/broker.ts: a fresh cloud peer in a child process, one
// upstream relayed to one downstream and stored, WebSocket, 16 chunks in flight) with both clients compressing, on
// points whose bytes look like data (a CAN-like record, JSON text), and times our compression code alone on the
// same kind of chunks in this process (deflate = the sender's cost, inflate = the receiver's, per chunk).
import Long from "long";
import { MessageDeflater, MessageInflater } from "../proto/transport/compression/message-deflate.js";
import type { CompressionParams } from "../proto/transport/compression/negotiation.js";
import { encodeMessage } from "../proto/wire/message.js";
import { runCase } from "./broker.js";
import { arg, isMain, report, type Row } from "./lib.js";

/** The levels iscp-go names (BestSpeed, DefaultCompression, BestCompression), with its context takeover. */
const SETTINGS: { key: string; compression: string; params?: CompressionParams }[] = [
  { key: "off", compression: "off" },
  { key: "pm6", compression: "per-message, level 6", params: { level: 6, contextTakeover: false, windowBits: 15 } },
  { key: "ct1", compression: "context takeover, level 1", params: { level: 1, contextTakeover: true, windowBits: 15 } },
  { key: "ct6", compression: "context takeover, level 6", params: { level: 6, contextTakeover: true, windowBits: 15 } },
  { key: "ct9", compression: "context takeover, level 9", params: { level: 9, contextTakeover: true, windowBits: 15 } },
];
const POINTS_PER_CHUNK: Record<number, number> = { 16: 100, 1024: 16 };
const CODEC_CHUNKS = 400;
const SECONDS = Number(arg("duration") ?? process.env.BENCH_COMPRESSION_SECONDS ?? 5);
/** `--cases 16:off,1024:ct6`: only these payload sizes and settings (keys of SETTINGS); all when absent. */
const ONLY = arg("cases")?.split(",");

/**
 * A point's bytes after its send time and number (bytes 0-11): 16 B = two slowly changing int16 sensor values
 * (a CAN-like record); 1 KiB = JSON lines of a GNSS receiver with changing figures.
 */
function content(point: Buffer, n: number): void {
  if (point.length <= 16) {
    point.writeInt16LE(600 + Math.round(200 * Math.sin(n / 500)), 12);
    point.writeInt16LE(2000 + (n % 64), 14);
    return;
  }
  let text = "";
  for (let i = 0; text.length < point.length - 12; i++) {
    const k = n * 8 + i;
    text +=
      `{"sensor":"gnss/${i}","t":${k},"lat":35.${681234 + (k % 997)},"lon":139.${767125 + ((k * 7) % 991)},` +
      `"speed":${((k % 1200) / 10).toFixed(1)},"heading":${k % 360},"sats":${8 + (k % 5)}}\n`;
  }
  point.write(text.slice(0, point.length - 12), 12, "latin1");
}

/**
 * The UpstreamChunk messages our client sends for these points (data ID alias declared, as after the first), made
 * as the broker case makes them: every point of a chunk carries the chunk's send time.
 */
function chunks(payloadB: number): Uint8Array[] {
  const perChunk = POINTS_PER_CHUNK[payloadB]!;
  const t0 = process.hrtime.bigint();
  return Array.from({ length: CODEC_CHUNKS }, (_, c) => {
    const now = process.hrtime.bigint() + BigInt(c * 1000);
    const dataPoints = Array.from({ length: perChunk }, (_, i) => {
      const p = Buffer.alloc(payloadB);
      p.writeBigUInt64LE(now, 0);
      p.writeUInt32LE(c * perChunk + i, 8);
      content(p, c * perChunk + i);
      return { elapsedTime: Long.fromString(String(now - t0)), payload: p };
    });
    return encodeMessage(
      {
        upstreamChunk: {
          streamIdAlias: 1,
          streamChunk: { sequenceNumber: c + 1, dataPointGroups: [{ dataIdAlias: 1, dataPoints }] },
        },
      },
      "proto",
    );
  });
}

const cpuUs = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since);
  return d.user + d.system;
};

/** Our deflate and inflate alone, CPU µs per chunk, and the compressed bytes per point; checks the round trip. */
function codecCost(payloadB: number, params: CompressionParams | undefined): Row {
  const msgs = chunks(payloadB);
  const points = CODEC_CHUNKS * POINTS_PER_CHUNK[payloadB]!;
  if (!params)
    return {
      codec_B_per_point: +(msgs.reduce((n, m) => n + m.length, 0) / points).toFixed(1),
      deflate_us_per_chunk: 0,
      inflate_us_per_chunk: 0,
    };
  const deflater = new MessageDeflater(params);
  const inflater = new MessageInflater(params, 64 * 2 ** 20);
  let t = process.cpuUsage();
  const frames = msgs.map((m) => deflater.deflate(m));
  const deflateUs = cpuUs(t);
  t = process.cpuUsage();
  const plain = frames.map((f) => inflater.inflate(f));
  const inflateUs = cpuUs(t);
  if (plain.some((p, i) => !p.equals(msgs[i]!))) throw new Error("a chunk did not come back as it was sent");
  return {
    codec_B_per_point: +(frames.reduce((n, f) => n + f.length, 0) / points).toFixed(1),
    deflate_us_per_chunk: Math.round(deflateUs / CODEC_CHUNKS),
    inflate_us_per_chunk: Math.round(inflateUs / CODEC_CHUNKS),
  };
}

/**
 * Columns: up/down wire B per point = iSCP frame bytes (after compression, before WebSocket framing) the upstream
 * sent and the downstream received per point in the measured phase; points/s, MB/s (payload), p50/p99 latency and
 * stored points/s as in the broker benchmark; broker/client CPU µs per chunk = the peer's and this process's (both
 * clients) CPU over the measured phase per relayed chunk; codec columns = our compression code alone on 400 chunks.
 */
export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const payloadB of [16, 1024])
    for (const s of SETTINGS) {
      if (ONLY && !ONLY.includes(`${payloadB}:${s.key}`)) continue;
      const codec = codecCost(payloadB, s.params);
      const e2e = await runCase("websocket", payloadB, { compression: s.params, content, seconds: SECONDS });
      rows.push({
        payload_B: payloadB,
        compression: s.compression,
        points_per_chunk: e2e.points_per_chunk,
        up_wire_B_per_point: e2e.up_wire_B_per_point,
        down_wire_B_per_point: e2e.down_wire_B_per_point,
        points_per_s: e2e.points_per_s,
        payload_MB_per_s: e2e.payload_MB_per_s,
        p50_ms: e2e.p50_ms,
        p99_ms: e2e.p99_ms,
        stored_points_per_s: e2e.stored_points_per_s,
        broker_cpu_us_per_chunk: e2e.broker_cpu_us_per_chunk,
        client_cpu_us_per_chunk: e2e.client_cpu_us_per_chunk,
        ...codec,
        note: e2e.note,
      });
    }
  return rows;
}

if (isMain(import.meta.url)) report("compression", await run());
