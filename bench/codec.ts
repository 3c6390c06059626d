// iSCP v2 codec throughput: encode and decode of one UpstreamChunk carrying 100 data points with
// 16-byte payloads, for our static protobufjs codec (enc=proto), our canonical JSON (enc=json) and,
// as a reference, the protobuf-ts codec inside @aptpod/iscp-ts. Each cell runs ~0.8 s.
import { createRequire } from "node:module";
import Long from "long";
import { decodeMessage, encodeMessage, type Encoding, type Message } from "../proto/iscp/wire.js";
import { isMain, report, type Row } from "./lib.js";

const SECONDS = Number(process.env.BENCH_CODEC_SECONDS ?? 0.8);

function sampleChunk(): Message {
  const payload = new Uint8Array(16).map((_, i) => i);
  return {
    upstreamChunk: {
      streamIdAlias: 1,
      streamChunk: {
        sequenceNumber: 12345,
        dataPointGroups: [{ dataIdAlias: 3, dataPoints: Array.from({ length: 100 }, (_, i) => ({ elapsedTime: Long.fromNumber(1_000_000 * i), payload })) }],
      },
    },
  };
}

/** Runs fn in batches until SECONDS have passed; returns operations per second. */
function measure(fn: () => void): number {
  for (let i = 0; i < 200; i++) fn(); // warm-up
  let n = 0;
  const t0 = process.hrtime.bigint();
  const deadline = t0 + BigInt(Math.round(SECONDS * 1e9));
  let now = t0;
  while (now < deadline) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
    now = process.hrtime.bigint();
  }
  return n / (Number(now - t0) / 1e9);
}

function row(codec: string, op: string, bytes: number, perSec: number): Row {
  return { codec, op, "bytes/msg": bytes, "msgs/s": Math.round(perSec), "MB/s": +((perSec * bytes) / 1e6).toFixed(1), "points/s": Math.round(perSec * 100) };
}

export async function run(): Promise<Row[]> {
  const msg = sampleChunk();
  const rows: Row[] = [];
  for (const enc of ["proto", "json"] as Encoding[]) {
    const bytes = encodeMessage(msg, enc);
    let sink = 0;
    rows.push(row(`ours ${enc}`, "encode", bytes.length, measure(() => (sink += encodeMessage(msg, enc).length))));
    rows.push(row(`ours ${enc}`, "decode", bytes.length, measure(() => (sink += decodeMessage(bytes, enc).upstreamChunk ? 1 : 0))));
    if (sink < 0) console.log(sink);
  }
  // Reference: @aptpod/iscp-ts's generated protobuf-ts codec on the same bytes.
  const require = createRequire(import.meta.url);
  const ref = require("@aptpod/iscp-ts/lib/encoding/codegen/message").Message as { fromBinary(b: Uint8Array): object; toBinary(m: object): Uint8Array };
  const bytes = encodeMessage(msg, "proto");
  const theirMsg = ref.fromBinary(bytes);
  rows.push(row("iscp-ts protobuf-ts", "encode", ref.toBinary(theirMsg).length, measure(() => ref.toBinary(theirMsg))));
  rows.push(row("iscp-ts protobuf-ts", "decode", bytes.length, measure(() => ref.fromBinary(bytes))));
  return rows;
}

if (isMain(import.meta.url)) {
  const rows = await run();
  report("codec", rows);
}
