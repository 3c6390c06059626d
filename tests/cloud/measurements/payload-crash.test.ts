// The cloud killed with SIGKILL while chunk uploads with payloads in files run: after a restart on the same
// data, every upload it acknowledged reads back intact, an upload cut off is there whole or not at all, and
// uploads go on (appending after whatever the kill left at a file's end).
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { INLINE_MAX } from "../../../cloud/measurements/storage/payload-files.js";
import { freePort, startChildPeer } from "./child-peer.js";
import { chunksMessage, createMeasurement, ndjson, P, protoBody, type Call, type TestPoint } from "./helpers.js";

let dir: string;
let child: ChildProcess | undefined;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "payload-crash-"));
});
afterEach(() => {
  if (child?.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  child = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts the peer on `dir`; resolves with a caller once it listens. */
async function startChild(port: number): Promise<Call> {
  const started = await startChildPeer(dir, port);
  child = started.child;
  return started.call;
}

/** Chunk n: three points too large to stay in their row, each payload starting with (n, point). */
function chunkPoints(n: number): TestPoint[] {
  return [0, 1, 2].map((i) => {
    const payload = Buffer.alloc(INLINE_MAX + 1000 * (n % 7) + i, (n * 3 + i) & 0xff);
    payload.writeUInt32BE(n, 0);
    payload.writeUInt32BE(i, 4);
    return { name: "crash/p", type: "bytes", elapsed: BigInt(n * 1000 + i), payload };
  });
}

const upload = (call: Call, meas: string, seq: string, n: number) =>
  call(`${P}/measurements/sequences/chunks`, {
    method: "POST",
    headers: { "content-type": "application/vnd.iscp.v2.protobuf" },
    body: protoBody(chunksMessage(meas, seq, [chunkPoints(n)], n)),
  });

/** The chunks the data endpoint returns whole and intact (each point as written), and any error lines. */
async function storedChunks(call: Call, meas: string): Promise<{ chunks: number[]; errors: unknown[] }> {
  const r = await call(`${P}/data?name=${meas}`);
  expect(r.status).toBe(200);
  const lines = typeof r.body === "string" ? ndjson(r.body) : r.body === undefined ? [] : [r.body];
  const byChunk = new Map<number, Buffer[]>();
  const errors: unknown[] = [];
  for (const l of lines) {
    if (l.data.d === undefined) {
      errors.push(l.data);
      continue;
    }
    const b = Buffer.from(l.data.d, "base64");
    const n = b.readUInt32BE(0);
    (byChunk.get(n) ?? byChunk.set(n, []).get(n)!).push(b);
  }
  for (const [n, got] of byChunk) {
    const want = chunkPoints(n).map((p) => Buffer.from(p.payload));
    // Buffer.equals: a deep comparison of 20 KiB payloads element by element takes seconds.
    expect(got.length === want.length && got.every((b, i) => b.equals(want[i]!)), `chunk ${n} intact`).toBe(true);
  }
  return { chunks: [...byChunk.keys()].sort((a, b) => a - b), errors };
}

it("keeps every acknowledged upload across a SIGKILL, and an interrupted one whole or not at all", async () => {
  const port = await freePort();
  let call = await startChild(port);
  const m = await createMeasurement(call);
  const seq = crypto.randomUUID();
  const acked: number[] = [];
  // Uploads two at a time until the kill cuts them off; the kill comes once 30 are acknowledged.
  let next = 1;
  const uploader = async () => {
    for (;;) {
      const n = next++;
      const r = await upload(call, m.uuid, seq, n).catch(() => undefined);
      if (r === undefined) return;
      expect(r.status).toBe(200);
      acked.push(n);
      if (acked.length === 30) child!.kill("SIGKILL");
    }
  };
  await Promise.all([uploader(), uploader()]);
  const sent = next - 1;
  await new Promise((r) =>
    child!.exitCode === null && child!.signalCode === null ? child!.once("exit", r) : r(undefined),
  );

  call = await startChild(port);
  const after = await storedChunks(call, m.uuid);
  expect(after.errors).toEqual([]);
  for (const n of acked) expect(after.chunks).toContain(n);
  for (const n of after.chunks) expect(n).toBeLessThanOrEqual(sent);

  // Uploads go on after the restart and read back with everything before them.
  for (const n of [sent + 1, sent + 2]) expect((await upload(call, m.uuid, seq, n)).status).toBe(200);
  const again = await storedChunks(call, m.uuid);
  expect(again.errors).toEqual([]);
  expect(again.chunks).toEqual([...after.chunks, sent + 1, sent + 2]);
}, 120_000);
