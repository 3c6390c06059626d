// Shared helpers of the data-path tests: temp dirs, the sample connector as a child process, waiting.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import type { FrameDecoder } from "../../runtime/ipc/codec.js";
import type { DataPoint } from "../../runtime/datapoint.js";

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "datapath-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Per test: a fresh temp dir (handed to `onDir`) and the returned list of stops, run last first after
 * the test, before the dir is removed.
 */
export function perTestDir(onDir: (dir: string) => void): Array<() => Promise<unknown>> {
  const stops: Array<() => Promise<unknown>> = [];
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    let dir: string;
    ({ dir, cleanup } = await tempDir());
    onDir(dir);
  });
  afterEach(async () => {
    for (const s of stops.splice(0).reverse()) await s();
    await cleanup();
  });
  return stops;
}

export const SAMPLE_CONNECTOR = join(process.cwd(), "runtime", "connectors", "sample-connector.ts");
/** Runs a TypeScript file as ONE process (the `tsx` CLI is a wrapper process: SIGKILL would miss the script). */
export const NODE_TS = [process.execPath, "--import", "tsx"] as const;

export function spawnTs(script: string, args: string[], stdout: "ignore" | "pipe" = "ignore"): ChildProcess {
  return spawn(NODE_TS[0], [...NODE_TS.slice(1), script, ...args], { stdio: ["ignore", stdout, "inherit"] });
}

export function startSampleConnector(args: string[]): ChildProcess {
  return spawnTs(SAMPLE_CONNECTOR, args);
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** Polls `cond` every 10 ms, running `poll` (e.g. a file read) before each check. */
export async function waitFor(
  cond: () => boolean,
  timeoutMs = 30_000,
  what = "condition",
  poll?: () => Promise<void>,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (poll) await poll();
    if (cond()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function point(
  name: string,
  type: string,
  payload: string | Uint8Array,
  elapsedNs: number,
  srcId = "src",
): DataPoint {
  return { name, type, payload: typeof payload === "string" ? Buffer.from(payload) : payload, elapsedNs, srcId };
}

/** The point with its own copy of the payload: payloads view buffers the FIFO reader and the decoders reuse. */
export function own(p: DataPoint): DataPoint {
  return { name: p.name, type: p.type, payload: Buffer.from(p.payload), elapsedNs: p.elapsedNs, srcId: p.srcId };
}

/** Decodes one read into `out`, keeping the points (copied: valid past the next push). */
export function decodeInto(dec: FrameDecoder, chunk: Buffer, out: DataPoint[]): void {
  const batch: DataPoint[] = [];
  dec.push(chunk, batch);
  for (const p of batch) out.push(own(p));
}

/** Comparable form of a point (payload as hex). */
export function plain(p: DataPoint): { name: string; type: string; payload: string; elapsedNs: number; srcId: string } {
  return {
    name: p.name,
    type: p.type,
    payload: Buffer.from(p.payload).toString("hex"),
    elapsedNs: p.elapsedNs,
    srcId: p.srcId,
  };
}

/** Sequence number the sample connector puts in the first 8 payload bytes. */
export function seqOf(p: DataPoint): number {
  return Number(Buffer.from(p.payload.buffer, p.payload.byteOffset, p.payload.length).readBigUInt64BE(0));
}
