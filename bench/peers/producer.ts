// The peers' edge side, a child process: reads the sample connector's frames from a FIFO with the agent's
// own reader and decoder, and publishes each point as one message (QoS 1 / acked JetStream publish) with at
// most --window unacknowledged; the FIFO is paused while too many points wait (the connector then blocks,
// as it does with the agent). With --batch N (N > 1) it packs up to N points into one message (batch.ts), as
// our agent packs a chunk: a full message at once, a partial one after 5 ms (our upstream's default
// flush_interval); with N = 1 nothing is batched beyond what the client library does by itself.
//   node --import tsx bench/peers/producer.ts --peer mosquitto|nats --url URL --fifo PATH [--window 256] [--batch N]
import { parseArgs } from "node:util";
import { FifoReader } from "../../runtime/ipc/fifo-reader.js";
import { packPoints } from "./batch.js";
import type { PeerClient } from "./broker.js";
import { connectMosquitto } from "./mosquitto.js";
import { connectNats } from "./nats.js";

const { values } = parseArgs({ options: { peer: { type: "string" }, url: { type: "string" }, fifo: { type: "string" }, window: { type: "string", default: "256" }, batch: { type: "string", default: "1" } } });
const window = Number(values.window);
const batch = Number(values.batch);
if (!(Number.isInteger(batch) && batch >= 1)) throw new Error(`--batch must be a whole number of points, at least 1, not ${values.batch}`);
const LINGER_MS = 5;
const client: PeerClient = values.peer === "nats" ? await connectNats(values.url!, "bench-producer") : await connectMosquitto(values.url!, "bench-producer");

// Points read but not yet published: payload views into the FIFO reads (kept alive by the views).
let queue: Uint8Array[] = [];
let head = 0;
let inFlight = 0;
let published = 0;
let publishedPoints = 0;
let acked = 0;
let failed = 0;
let waitingBytes = 0;
// Pause the FIFO above 16,384 points (at least four messages) or 16 MiB waiting, resume below a quarter of that.
const HIGH = Math.max(16 * 1024, 4 * batch);
const LOW = HIGH / 4;
const HIGH_BYTES = 16 * 1024 * 1024;
const LOW_BYTES = HIGH_BYTES / 4;

const reader = new FifoReader({
  path: values.fifo!,
  format: "iscp-v2-compat",
  srcId: "bench",
  onPoints: (points) => {
    for (const p of points) {
      queue.push(Buffer.from(p.payload)); // a copy: payloads view the reader's reused buffers
      waitingBytes += p.payload.length;
    }
    if (queue.length - head > HIGH || waitingBytes > HIGH_BYTES) reader.pause();
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

let linger: NodeJS.Timeout | undefined;
let lingered = false;

function pumpLoop(): void {
  while (inFlight < window && head < queue.length) {
    const n = Math.min(batch, queue.length - head);
    if (n < batch && !lingered) {
      linger ??= setTimeout(() => {
        linger = undefined;
        lingered = true;
        pump();
      }, LINGER_MS);
      break;
    }
    lingered = false;
    let msg: Uint8Array;
    if (batch === 1) msg = queue[head++]!;
    else {
      msg = packPoints(queue.slice(head, head + n));
      head += n;
    }
    waitingBytes -= batch === 1 ? msg.length : msg.length - 4 * n;
    inFlight++;
    published++;
    publishedPoints += n;
    client.publish(msg, onAck);
  }
  if (head > 4096 && head * 2 > queue.length) {
    queue = queue.slice(head);
    head = 0;
  }
  if (queue.length - head < LOW && waitingBytes < LOW_BYTES) reader.resume();
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
  if (m.type === "stats") process.send!({ type: "stats", published, publishedPoints, acked, failed, waiting: queue.length - head });
  if (m.type === "stop") void reader.stop().then(() => client.close()).finally(() => process.exit(0));
});
process.on("disconnect", () => process.exit(0));
