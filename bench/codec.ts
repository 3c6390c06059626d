// iSCP v2 codec throughput: encode and decode of one UpstreamChunk carrying 100 data points with
// 16-byte payloads, for our static protobufjs codec (enc=proto), our canonical JSON (enc=json) and,
// as a reference, the protobuf-ts codec inside @aptpod/iscp-ts. Then the agent's real-time send path:
// a stored chunk of 4096 16-byte points (4 data ids, aliased) to UpstreamChunk bytes, through per-point
// objects and protobufjs (the former path) and through chunk-frame.ts (the stored chunk's spans copied). Each cell runs ~0.8 s.
import { createRequire } from "node:module";
import Long from "long";
import { toLong } from "../proto/wire/long.js";
import { decodeMessage, encodeMessage, iscp2, type Encoding, type Message } from "../proto/wire/message.js";
import { encodeUpstreamChunkMessage } from "../proto/wire/chunk-frame.js";
import { chunkGroups, chunkView, decodeChunk, encodeChunk } from "../runtime/queue/chunk-codec.js";
import { isMain, report, type Row } from "./lib.js";

const SECONDS = Number(process.env.BENCH_CODEC_SECONDS ?? 0.8);

function sampleChunk(): Message {
  const payload = new Uint8Array(16).map((_, i) => i);
  return {
    upstreamChunk: {
      streamIdAlias: 1,
      streamChunk: {
        sequenceNumber: 12345,
        dataPointGroups: [
          {
            dataIdAlias: 3,
            dataPoints: Array.from({ length: 100 }, (_, i) => ({
              elapsedTime: Long.fromNumber(1_000_000 * i),
              payload,
            })),
          },
        ],
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

function row(codec: string, op: string, bytes: number, perSec: number, points = 100): Row {
  return {
    codec,
    op,
    "bytes/msg": bytes,
    "msgs/s": Math.round(perSec),
    "MB/s": +((perSec * bytes) / 1e6).toFixed(1),
    "points/s": Math.round(perSec * points),
  };
}

const STORED_POINTS = 4096;

/** A stored chunk as the agent's queue holds it: 200k points/s, 10 s into a measurement. */
function storedChunk(): Buffer {
  const payload = Buffer.from(new Uint8Array(16).map((_, i) => i));
  return encodeChunk(
    Array.from({ length: STORED_POINTS }, (_, i) => ({
      name: `sensor/${i % 4}`,
      type: "float64",
      payload,
      elapsedNs: 10e9 + i * 5000,
      srcId: "",
    })),
  );
}

const aliasOf = (name: string) => 1 + Number(name.slice(7));

/** The former send path: chunkGroups, point objects (Long elapsed times), protobufjs. */
function objectPath(buf: Buffer): Uint8Array {
  const groups: iscp2.IDataPointGroup[] = chunkGroups(decodeChunk(buf)).map((g) => ({
    dataIdAlias: aliasOf(g.dataId.name),
    dataPoints: g.points.map((p) => ({ elapsedTime: toLong(Math.trunc(p.elapsedNs)), payload: p.payload })),
  }));
  return encodeMessage(
    {
      upstreamChunk: { streamIdAlias: 1, streamChunk: { sequenceNumber: 12345, dataPointGroups: groups }, dataIds: [] },
    },
    "proto",
  );
}

const directPath = (buf: Buffer) =>
  encodeUpstreamChunkMessage(chunkView(buf), { streamIdAlias: 1, sequenceNumber: 12345, aliasOf }).frame;

export async function run(): Promise<Row[]> {
  const msg = sampleChunk();
  const rows: Row[] = [];
  for (const enc of ["proto", "json"] as Encoding[]) {
    const bytes = encodeMessage(msg, enc);
    let sink = 0;
    rows.push(
      row(
        `ours ${enc}`,
        "encode",
        bytes.length,
        measure(() => (sink += encodeMessage(msg, enc).length)),
      ),
    );
    rows.push(
      row(
        `ours ${enc}`,
        "decode",
        bytes.length,
        measure(() => (sink += decodeMessage(bytes, enc).upstreamChunk ? 1 : 0)),
      ),
    );
    if (sink < 0) console.log(sink);
  }
  // Reference: @aptpod/iscp-ts's generated protobuf-ts codec on the same bytes.
  const require = createRequire(import.meta.url);
  const ref = require("@aptpod/iscp-ts/lib/encoding/codegen/message").Message as {
    fromBinary(b: Uint8Array): object;
    toBinary(m: object): Uint8Array;
  };
  const bytes = encodeMessage(msg, "proto");
  const theirMsg = ref.fromBinary(bytes);
  rows.push(
    row(
      "iscp-ts protobuf-ts",
      "encode",
      ref.toBinary(theirMsg).length,
      measure(() => ref.toBinary(theirMsg)),
    ),
  );
  rows.push(
    row(
      "iscp-ts protobuf-ts",
      "decode",
      bytes.length,
      measure(() => ref.fromBinary(bytes)),
    ),
  );
  const stored = storedChunk();
  const size = directPath(stored).length;
  if (!Buffer.from(objectPath(stored)).equals(Buffer.from(directPath(stored)))) throw new Error("send paths disagree");
  let sink = 0;
  rows.push(
    row(
      "agent send: objects",
      "stored->frame",
      size,
      measure(() => (sink += objectPath(stored).length)),
      STORED_POINTS,
    ),
  );
  rows.push(
    row(
      "agent send: direct",
      "stored->frame",
      size,
      measure(() => (sink += directPath(stored).length)),
      STORED_POINTS,
    ),
  );
  if (sink < 0) console.log(sink);
  return rows;
}

if (isMain(import.meta.url)) {
  const rows = await run();
  report("codec", rows);
}
