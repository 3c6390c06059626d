// Data-path building blocks with 16-byte payloads: FIFO frame parsing (in memory and through a real FIFO
// from the sample connector process), LMDB enqueue (durable, batched) and ack rates, and the two together.
//   npx tsx bench/queue.ts        (or: npm run bench -- queue)
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { DataPoint } from "../runtime/datapoint.js";
import { FifoReader } from "../runtime/ipc/fifo-reader.js";
import { IscpV2CompatDecoder, encodeIscpV2Frame } from "../runtime/ipc/iscp-v2-compat.js";
import * as Schema from "effect/Schema";
import { Launch } from "../runtime/ipc/schema.js";
import { openUpstreamChannel } from "../runtime/ipc/upstream-channel.js";
import { ChunkBatcher } from "../runtime/datapath/chunk-batcher.js";
import { DurableQueue } from "../runtime/queue/store.js";
import { isMain, report, type Row } from "./lib.js";

const PAYLOAD = 16;
/** Bytes of one frame: header, type `bytes`, name `sample/counter`, payload. */
const FRAME = 16 + 5 + 14 + PAYLOAD;
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;

/** The sample connector as one node process (no tsx wrapper), as fast as the pipe takes frames. */
const connectorArgs = (fifo: string, count: number) => [
  "--import",
  "tsx",
  path.join(root, "runtime/connectors/sample-connector.ts"),
  "--path",
  fifo,
  "--rate",
  "0",
  "--size",
  String(PAYLOAD),
  "--count",
  String(count),
];
const startConnector = (fifo: string, count: number) =>
  spawn(process.execPath, connectorArgs(fifo, count), { stdio: "ignore", cwd: root });

function parseInMemory(): Row {
  const frame = encodeIscpV2Frame(1, 2, "bytes", "sample/counter", Buffer.alloc(PAYLOAD));
  const perRead = Math.floor(65536 / frame.length);
  const read = Buffer.concat(Array.from({ length: perRead }, () => frame));
  const dec = new IscpV2CompatDecoder({ srcId: "bench", namePrefix: "v1/1/" });
  let points = 0;
  const t0 = process.hrtime.bigint();
  while (seconds(t0) < 2) {
    for (let i = 0; i < 50; i++) {
      // Each read is a fresh buffer, as from the FIFO (payload views keep it alive).
      const out: DataPoint[] = [];
      dec.push(Buffer.from(read), out);
      points += out.length;
    }
  }
  const s = seconds(t0);
  return {
    case: "iscp-v2-compat parse, in memory (64 KiB reads)",
    points,
    seconds: +s.toFixed(2),
    points_per_s: Math.round(points / s),
    MB_per_s: +((points * frame.length) / s / 1e6).toFixed(1),
  };
}

async function fifoFromConnector(dir: string): Promise<Row> {
  const count = 3_000_000;
  const fifo = path.join(dir, "p.fifo");
  let got = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  let t0 = 0n;
  const reader = new FifoReader({
    path: fifo,
    format: "iscp-v2-compat",
    srcId: "bench",
    onRead: () => {
      if (t0 === 0n) t0 = process.hrtime.bigint(); // from the connector's first bytes (not its start-up)
    },
    onPoints: (ps) => {
      if ((got += ps.length) >= count) done();
    },
  });
  await reader.start();
  const child = startConnector(fifo, count);
  await finished;
  const s = seconds(t0);
  await reader.stop();
  child.kill("SIGKILL");
  return {
    case: "connector -> FIFO -> reader",
    points: count,
    seconds: +s.toFixed(2),
    points_per_s: Math.round(count / s),
    MB_per_s: +((count * FRAME) / s / 1e6).toFixed(1),
  };
}

/** The real blocks: upstream channel (launching the connector) -> batcher (5 ms interval) -> LMDB. */
async function channelToQueue(dir: string): Promise<Row> {
  const count = 4_000_000;
  const q = await DurableQueue.open({ dir: path.join(dir, "pipeline"), capacityMiB: 4096, limitDataStorage: true });
  const meas = "00000000-0000-4000-8000-00000000b001";
  q.startMeasurement(meas, 0n);
  const seq = q.openSequence(meas, "up", "00000000-0000-4000-8000-00000000b0aa", true).ord;
  const batcher = new ChunkBatcher(q, seq, { flushPolicy: "interval", flushIntervalMs: 5 });
  let t0 = 0n;
  const ch = openUpstreamChannel(
    {
      settings: {
        id: "bench",
        data_name_prefix: "v1/1/",
        format: "iscp-v2-compat",
        ipc: { type: "fifo", path: path.join(dir, "q.fifo") },
        launch: Schema.decodeUnknownSync(Launch)({
          command: process.execPath,
          args: [...connectorArgs("${ipc.path}", count)],
          working_dir: root,
        }),
        dest_ids: ["up"],
      },
      sink: (points) => batcher.push(points),
    },
    {
      opened() {
        if (t0 === 0n) t0 = process.hrtime.bigint(); // from the connector's first bytes (not its start-up)
      },
      closed() {},
      failed(r) {
        throw new Error(r);
      },
      data() {},
    },
  );
  while (ch.stats.accepted < count) await new Promise((r) => setTimeout(r, 5));
  const s = seconds(t0);
  await ch.close();
  const chunks = q.stats.chunks;
  await q.close();
  return {
    case: "upstream channel (connector) -> batcher -> LMDB (durable)",
    points: count,
    seconds: +s.toFixed(2),
    points_per_s: Math.round(count / s),
    MB_per_s: +((count * FRAME) / s / 1e6).toFixed(1),
    chunks_per_s: Math.round(chunks / s),
  };
}

async function lmdbRates(dir: string, pointsPerChunk: number): Promise<Row[]> {
  const q = await DurableQueue.open({
    dir: path.join(dir, `lmdb-${pointsPerChunk}`),
    capacityMiB: 4096,
    limitDataStorage: true,
  });
  q.startMeasurement("00000000-0000-4000-8000-00000000c001", 0n);
  const seq = q.openSequence(
    "00000000-0000-4000-8000-00000000c001",
    "up",
    "00000000-0000-4000-8000-00000000c0aa",
    true,
  );
  const points: DataPoint[] = Array.from({ length: pointsPerChunk }, (_, i) => ({
    name: "sample/counter",
    type: "bytes",
    payload: Buffer.alloc(PAYLOAD, i),
    elapsedNs: i,
    srcId: "b",
  }));
  // Enqueue: 16 chunks per event turn, up to 64 awaiting commit.
  let chunks = 0;
  const pending = new Set<Promise<void>>();
  const t0 = process.hrtime.bigint();
  while (seconds(t0) < 3) {
    for (let i = 0; i < 16; i++) {
      const p = q.append(seq.ord, points).durable;
      pending.add(p);
      void p.then(() => pending.delete(p));
      chunks++;
    }
    if (pending.size >= 64) await Promise.race(pending);
    else await new Promise((r) => setImmediate(r));
  }
  await Promise.all(pending);
  const s1 = seconds(t0);
  // Ack everything, 256 chunks per call.
  const t1 = process.hrtime.bigint();
  for (let from = 1; from <= chunks; from += 256) {
    await q.ack(
      seq.ord,
      Array.from({ length: Math.min(256, chunks - from + 1) }, (_, i) => from + i),
    );
  }
  const s2 = seconds(t1);
  const left = q.stats.chunks;
  await q.close();
  const n = chunks * pointsPerChunk;
  return [
    {
      case: `LMDB enqueue, ${pointsPerChunk} points/chunk (durable)`,
      points: n,
      seconds: +s1.toFixed(2),
      points_per_s: Math.round(n / s1),
      chunks_per_s: Math.round(chunks / s1),
    },
    // An ack deletes whole chunks: its cost does not depend on the points inside, so only chunks/s is a rate of it.
    {
      case: `LMDB ack, ${pointsPerChunk} points/chunk`,
      chunks,
      seconds: +s2.toFixed(2),
      chunks_per_s: Math.round(chunks / s2),
      left,
    },
  ];
}

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-queue-"));
  try {
    const rows: Row[] = [parseInMemory(), await fifoFromConnector(dir)];
    rows.push(...(await lmdbRates(dir, 1024)), ...(await lmdbRates(dir, 8192)));
    rows.push(await channelToQueue(dir));
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const rows = await run();
  console.log(`results: ${report("queue", rows)}`);
}
