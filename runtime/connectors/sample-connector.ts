// Sample device connector: writes frames into the agent's upstream FIFO at a given rate and payload size.
//   npx tsx runtime/connectors/sample-connector.ts --path /tmp/x.fifo --rate 1000 --size 16
// --stamp puts the write time (CLOCK_MONOTONIC ns, u64 big-endian) after the sequence number (payloads of
// 16 bytes or more), so a receiver can measure latency; --report prints {"sent", "first_ns", "last_ns"} as one
// JSON line on stdout when it stops (SIGTERM or --count reached); --write-log FILE writes "<first seq> <points>
// <stamp ns>" per write into FILE when it stops. All are used by the agent benchmark.
// Each payload starts with the frame's sequence number (u64 big-endian, from 0) when it has room,
// so a receiver can check order and loss. Timestamps are CLOCK_MONOTONIC readings (what the agent expects
// upstream). The FIFO is opened blocking (waits for the agent) and reopened if the agent goes away.
import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { encodeIscpV2Frame } from "../ipc/iscp-v2-compat.js";
import { encodeLoggerMsgRaw } from "../ipc/logger-msg.js";
import { VehicleSim } from "./vehicle.js";

const USAGE = `Usage: sample-connector --path FIFO [options]

Writes data points into an edge agent's upstream FIFO at a given rate: a counter in each payload, so a receiver
can check order and loss. Run it against a device connector channel the agent has created.

Options:
  --path FIFO          the upstream FIFO (env EDGE_AGENT_IPC_PATH; required)
  --format NAME        iscp-v2-compat or logger-msg (env EDGE_AGENT_IPC_FORMAT; default iscp-v2-compat)
  --rate N             points per second; 0 = as fast as the FIFO takes them (default 1000)
  --size N             payload bytes (default 16)
  --count N            stop after N points; 0 = run until stopped (default 0)
  --name NAME          the data name (default sample/counter)
  --type TYPE          the data type (default bytes; logger-msg always sends string)
  --stamp              put the write time (CLOCK_MONOTONIC ns) after the counter, for latency (16 B or more)
  --report             print {"sent", "first_ns", "last_ns"} as one JSON line when it stops
  --write-log FILE     write "<first seq> <points> <stamp ns>" per write into FILE when it stops
  --reopen-every N     close and reopen the FIFO every N points (default 0: never)
  --exit-code N        exit code after --count points (default 0)
  --play vehicle       instead of the counter, play a vehicle on a test track: GNSS position (json), speed,
                       engine rpm, IMU accelerations, coolant temperature (float64), a CAN frame (bytes) and
                       a log line on gear changes and laps (string), about 430 points/s in all
  -h, --help           this help
`;

const OPTIONS = {
  path: { type: "string", default: process.env.EDGE_AGENT_IPC_PATH ?? "" },
  format: { type: "string", default: process.env.EDGE_AGENT_IPC_FORMAT ?? "iscp-v2-compat" },
  rate: { type: "string", default: "1000" }, // points per second; 0 = as fast as the pipe takes them
  size: { type: "string", default: "16" }, // payload bytes
  count: { type: "string", default: "0" }, // stop after this many points; 0 = run until killed
  name: { type: "string", default: "sample/counter" },
  type: { type: "string", default: "bytes" },
  "exit-code": { type: "string", default: "0" }, // exit code after --count points (tests of restart)
  "reopen-every": { type: "string", default: "0" }, // close and reopen the FIFO every N points
  stamp: { type: "boolean", default: false },
  report: { type: "boolean", default: false },
  "write-log": { type: "string" },
  play: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

function parseOptions() {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (e) {
    process.stderr.write(`sample-connector: ${(e as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}

const { values: a } = parseOptions();
if (a.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const path = a.path!;
if (path === "") {
  process.stderr.write("sample-connector: --path (or EDGE_AGENT_IPC_PATH) is required\n");
  process.exit(2);
}
if (a.play !== undefined && a.play !== "vehicle") {
  process.stderr.write(`sample-connector: --play takes "vehicle", not "${a.play}"\n`);
  process.exit(2);
}
if (a.format !== "iscp-v2-compat" && a.format !== "logger-msg") {
  process.stderr.write(`sample-connector: --format takes "iscp-v2-compat" or "logger-msg", not "${a.format}"\n`);
  process.exit(2);
}
const rate = Number(a.rate);
const size = Number(a.size);
const count = Number(a.count);
const reopenEvery = Number(a["reopen-every"]);
const format = a.format!;
const logger = format === "logger-msg";
const type = logger ? "string" : a.type!;

let fd = -1;
let seq = 0;
let firstNs = 0;
let lastNs = 0;
const stamp = a.stamp! && size >= 16;
const stampBytes = Buffer.alloc(8);
const started = process.hrtime();
const startNs = started[0] * 1e9 + started[1];
/** --write-log: first sequence number, points and stamp of each write, kept in memory until the end. */
const writes: number[] = [];

// One template frame; each batch copies it and patches the timestamp and the sequence number,
// so the connector itself can produce millions of frames per second.
const maybeTemplate = logger
  ? encodeLoggerMsgRaw(0, 0, type, a.name!, Buffer.alloc(size, 0x61))
  : encodeIscpV2Frame(0, 0, type, a.name!, Buffer.alloc(size, 0x61));
if (maybeTemplate === undefined) throw new Error("cannot encode frame");
const template: Buffer = maybeTemplate;
const tsAt = logger ? 4 : 0;
const payloadAt = template.length - size;
// As fast as possible: 4096 frames per write, but at most ~1 MiB (large payloads would otherwise make
// one write of hundreds of MB).
const fastBatch = Math.max(1, Math.min(4096, Math.floor((1 << 20) / template.length)));

// The batch buffer is filled with template frames once and reused (writes are synchronous): a batch only
// patches each frame's timestamp, sequence number and stamp.
let batchBuf = Buffer.alloc(0);
let batchView = new DataView(new ArrayBuffer(0));

function batch(first: number, n: number): Buffer {
  const len = template.length;
  if (batchBuf.length < len * n) {
    batchBuf = Buffer.allocUnsafe(len * n);
    for (let i = 0; i < n; i++) template.copy(batchBuf, i * len);
    batchView = new DataView(batchBuf.buffer, batchBuf.byteOffset, batchBuf.length);
  }
  const b = batchBuf;
  const v = batchView;
  const [sec, nsec] = process.hrtime();
  lastNs = sec * 1e9 + nsec;
  if (firstNs === 0) firstNs = lastNs;
  if (stamp) stampBytes.writeBigUInt64BE(BigInt(sec) * 1_000_000_000n + BigInt(nsec));
  const stampHi = stampBytes.readUInt32BE(0);
  const stampLo = stampBytes.readUInt32BE(4);
  for (let i = 0; i < n; i++) {
    const off = i * len;
    v.setUint32(off + tsAt, sec, true);
    v.setUint32(off + tsAt + 4, nsec, true);
    if (size >= 8) {
      const k = first + i; // u64 big-endian as two u32 (no BigInt per frame)
      v.setUint32(off + payloadAt, Math.floor(k / 0x100000000));
      v.setUint32(off + payloadAt + 4, k >>> 0);
    }
    if (stamp) {
      v.setUint32(off + payloadAt + 8, stampHi);
      v.setUint32(off + payloadAt + 12, stampLo);
    }
  }
  return n * len === b.length ? b : b.subarray(0, n * len);
}

function writeAll(buf: Buffer): void {
  let off = 0;
  while (off < buf.length) {
    if (fd < 0) fd = openSync(path, "w");
    try {
      off += writeSync(fd, buf, off);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") continue;
      if (code !== "EPIPE") throw e;
      closeSync(fd); // the agent closed its end: wait for it to open again, resend the whole batch
      fd = -1;
      off = 0;
    }
  }
}

function tick(): void {
  const now = process.hrtime();
  const elapsed = now[0] * 1e9 + now[1] - startNs;
  let due = rate > 0 ? Math.floor((elapsed / 1e9) * rate) - seq : fastBatch;
  if (count > 0) due = Math.min(due, count - seq);
  due = Math.min(due, 65536);
  while (due > 0) {
    // With --reopen-every, a batch ends where the connector closes and reopens the FIFO.
    // At most fastBatch frames (~1 MiB) per write, also when a rate has fallen behind.
    const n = Math.min(fastBatch, reopenEvery > 0 ? Math.min(due, reopenEvery - (seq % reopenEvery)) : due);
    writeAll(batch(seq, n));
    if (a["write-log"]) writes.push(seq, n, lastNs);
    seq += n;
    due -= n;
    if (reopenEvery > 0 && seq % reopenEvery === 0 && fd >= 0) {
      closeSync(fd);
      fd = -1;
    }
  }
  if (count > 0 && seq >= count) {
    if (fd >= 0) closeSync(fd);
    report();
    process.exit(Number(a["exit-code"]));
  }
  if (rate > 0) setTimeout(tick, 2);
  else setImmediate(tick);
}

function report(): void {
  if (a["write-log"]) {
    const lines: string[] = [];
    for (let i = 0; i < writes.length; i += 3) lines.push(`${writes[i]} ${writes[i + 1]} ${writes[i + 2]}\n`);
    writeFileSync(a["write-log"], lines.join(""));
  }
  if (a.report) writeSync(1, `${JSON.stringify({ sent: seq, first_ns: firstNs, last_ns: lastNs })}\n`);
}

/** --play vehicle: every 10 ms, the simulation's points due by now, each stamped with its own due time. */
function playVehicle(): void {
  const sim = new VehicleSim();
  const encode = logger ? encodeLoggerMsgRaw : encodeIscpV2Frame;
  const step = () => {
    const [sec, nsec] = process.hrtime();
    const frames: Buffer[] = [];
    for (const p of sim.advance((sec * 1e9 + nsec - startNs) / 1e9)) {
      const ns = startNs + Math.round(p.t * 1e9);
      const frame = encode(Math.floor(ns / 1e9), ns % 1e9, p.type, p.name, p.payload);
      if (frame) frames.push(frame);
    }
    if (frames.length > 0) writeAll(Buffer.concat(frames));
    seq += frames.length;
    setTimeout(step, 10);
  };
  step();
}

process.on("SIGTERM", () => {
  report();
  process.exit(0);
});
if (a.play === "vehicle") playVehicle();
else tick();
