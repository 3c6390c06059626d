// The many-edges bench's floor: a minimal Node receiver, a child process. A `ws` server takes binary frames
// (edges-senders.ts: a u32 sequence number and the frame's points), appends each frame to one file, closes a
// batch at most 5 ms after its first frame (at once when no write is in flight), writes it with one writev and
// one fdatasync, and then acks each frame of it (its 4-byte sequence number back). Nothing else: no parsing of
// the points, no index, no database, so its CPU per frame is what any receiver that makes frames durable pays.
//   node --import tsx bench/edges-receiver.ts --dir DIR; {type: "ready", port} once it listens.
import fs from "node:fs";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import { WebSocketServer, type WebSocket } from "ws";

const { values } = parseArgs({ options: { dir: { type: "string" } } });
const fd = fs.openSync(path.join(values.dir!, "frames.bin"), "a");
const writev = promisify(fs.writev);
const fdatasync = promisify(fs.fdatasync);

/** A batch closes this long after its first frame at the latest. */
const BATCH_MS = 5;
/** Batches written and synced at once (libuv's thread pool has four threads). */
const IN_FLIGHT = 4;

interface Batch {
  frames: Buffer[];
  to: WebSocket[];
}
let open: Batch = { frames: [], to: [] };
let closeTimer: NodeJS.Timeout | undefined;
let inFlight = 0;
const closed: Batch[] = [];
const stats = { frames: 0, bytes: 0, syncs: 0, failed: 0, error: "" };

function closeBatch(): void {
  clearTimeout(closeTimer);
  closeTimer = undefined;
  if (open.frames.length === 0) return;
  closed.push(open);
  open = { frames: [], to: [] };
  drain();
}

function drain(): void {
  while (inFlight < IN_FLIGHT && closed.length > 0) {
    const b = closed.shift()!;
    inFlight++;
    // fdatasync after this batch's write completed covers it (and whatever else reached the file before).
    writev(fd, b.frames)
      .then(() => fdatasync(fd))
      .then(
        () => {
          stats.syncs++;
          b.frames.forEach((f, i) => b.to[i]!.send(f.subarray(0, 4)));
        },
        (e: Error) => {
          stats.failed += b.frames.length;
          stats.error ||= e.message;
        },
      )
      .finally(() => {
        inFlight--;
        if (inFlight === 0 && open.frames.length > 0) closeBatch();
        else drain();
      });
  }
}

const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
wss.on("connection", (ws) => {
  ws.on("error", () => {});
  ws.on("message", (data: Buffer) => {
    stats.frames++;
    stats.bytes += data.length;
    open.frames.push(data);
    open.to.push(ws);
    if (open.frames.length > 1) return;
    // The batch's first frame: it closes once nothing is being written (next turn), or after BATCH_MS.
    if (inFlight === 0) setImmediate(closeBatch);
    else closeTimer = setTimeout(closeBatch, BATCH_MS);
  });
});
await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
const port = (wss.address() as { port: number }).port;

process.send!({ type: "ready", port });
process.on("message", (m: { type: string }) => {
  if (m.type === "stats") process.send!({ type: "stats", ...stats });
  if (m.type === "stop") process.exit(0);
});
process.on("disconnect", () => process.exit(0));
