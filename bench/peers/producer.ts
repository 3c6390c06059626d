// The peers' edge side, a child process: reads the sample connector's frames from a FIFO with the agent's
// own reader and decoder, and publishes them (QoS 1 / acked JetStream publish) with at most --window messages
// unacknowledged; the FIFO is paused while too many points wait (the connector then blocks, as it does with
// the agent). With --batch N (N > 1) points are packed into messages of N points as they are read (batch.ts),
// as our agent packs a chunk: a full message is ready at once, a partial one after 5 ms (our upstream's default
// flush_interval); with N = 1 each point is one message, batched by nothing but the client library.
//   node --import tsx bench/peers/producer.ts --peer mosquitto|nats --url URL --fifo PATH [--window 256] [--batch N]
import { parseArgs } from "node:util";
import { FifoReader } from "../../runtime/ipc/fifo-reader.js";
import { Packer } from "./batch.js";
import type { PeerClient } from "./broker.js";
import { connectMosquitto } from "./mosquitto.js";
import { connectNats } from "./nats.js";

const { values } = parseArgs({
  options: {
    peer: { type: "string" },
    url: { type: "string" },
    fifo: { type: "string" },
    window: { type: "string", default: "256" },
    batch: { type: "string", default: "1" },
  },
});
const window = Number(values.window);
const packer = new Packer(Number(values.batch));
const batched = packer.maxPoints > 1;
const LINGER_MS = 5;
const client: PeerClient =
  values.peer === "nats"
    ? await connectNats(values.url!, "bench-producer")
    : await connectMosquitto(values.url!, "bench-producer");

// Messages ready but not yet published, and the points they hold.
let queue: Array<{ msg: Uint8Array; points: number }> = [];
let head = 0;
let inFlight = 0;
let published = 0;
let publishedPoints = 0;
let acked = 0;
let failed = 0;
let waitingPoints = 0;
let waitingBytes = 0;
let linger: NodeJS.Timeout | undefined;
// Pause the FIFO above 16,384 points (at least four messages) or 16 MiB waiting, resume below a quarter of that.
const HIGH = Math.max(16 * 1024, 4 * packer.maxPoints);
const LOW = HIGH / 4;
const HIGH_BYTES = 16 * 1024 * 1024;
const LOW_BYTES = HIGH_BYTES / 4;

function ready(msg: Uint8Array | undefined, points: number): void {
  if (!msg) return;
  queue.push({ msg, points });
  waitingPoints += points;
  waitingBytes += msg.length;
}

const reader = new FifoReader({
  path: values.fifo!,
  format: "iscp-v2-compat",
  srcId: "bench",
  onPoints: (points) => {
    if (!batched)
      for (const p of points) ready(Buffer.from(p.payload), 1); // a copy: payloads view the reader's reused buffers
    else {
      for (const p of points) ready(packer.add(p.payload), packer.maxPoints);
      linger ??= setTimeout(() => {
        linger = undefined;
        const n = packer.count;
        ready(packer.flush(), n);
        pump();
      }, LINGER_MS);
    }
    if (waitingPoints > HIGH || waitingBytes > HIGH_BYTES) reader.pause();
    pump();
  },
});

let pumping = false;
function pump(): void {
  // A client may call back synchronously (an error while it disconnects): no re-entry, the loop goes on.
  if (pumping) return;
  pumping = true;
  try {
    pumpLoop();
  } finally {
    pumping = false;
  }
}

function pumpLoop(): void {
  while (inFlight < window && head < queue.length) {
    const { msg, points } = queue[head++]!;
    waitingPoints -= points;
    waitingBytes -= msg.length;
    inFlight++;
    published++;
    publishedPoints += points;
    client.publish(msg, onAck);
  }
  if (head > 4096 && head * 2 > queue.length) {
    queue = queue.slice(head);
    head = 0;
  }
  if (waitingPoints < LOW && waitingBytes < LOW_BYTES) reader.resume();
}

function onAck(err?: Error): void {
  inFlight--;
  if (err) failed++;
  else acked++;
  pump();
}

await reader.start();
process.send!({ type: "ready" });
process.on("message", (m: { type: string }) => {
  if (m.type === "stats")
    process.send!({ type: "stats", published, publishedPoints, acked, failed, waiting: waitingPoints });
  if (m.type === "stop")
    void reader
      .stop()
      .then(() => client.close())
      .finally(() => process.exit(0));
});
process.on("disconnect", () => process.exit(0));
