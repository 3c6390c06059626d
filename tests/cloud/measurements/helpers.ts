// Helpers for the measurement tests: an admin caller, measurement creation, chunk bodies.
import { afterAll, beforeAll, expect } from "vitest";
import { pb } from "../../../proto/gen/pb.js";
import { QoS } from "../../../proto/wire/message.js";
import { measurementHooks } from "../../../cloud/measurements/ingest/iscp-hooks.js";
import type { UpstreamChunkIn, UpstreamRef } from "../../../cloud/measurements/ingest/upstream-store.js";
import { adminToken, caller, startPeerWithAdmin, type Call } from "../accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import type { ConfigInput } from "../../../cloud/config.js";
import type { Db, Queryable } from "../../../cloud/database/db.js";

export { adminToken, caller, startPeerWithAdmin, type Call };
export { expectError } from "../accounts/helpers.js";

export const DEFAULT_PROJECT = "00000000-0000-0000-0000-000000000000";
export const P = `/v1/projects/${DEFAULT_PROJECT}`;
export const EDGE = "5b0a3c4e-1f2d-4c3b-9a8e-7d6c5b4a3f21";
export const BASETIME = "2026-01-02T03:04:05.123456789Z";

export async function adminCall(peer: TestPeer): Promise<Call> {
  return caller(peer, await adminToken(peer));
}

/** A cloud peer on a temp dir and an admin caller for a file's tests: started before them, stopped after. */
/**
 * For tests of the direct commit's answers and rows (skipped numbers, refused batches, log rows, statements per
 * commit): the ingest journal off, as it acknowledges chunks before they reach cloud.db (ingest-journal.test.ts
 * checks what a user sees with it on).
 */
export const DIRECT_COMMIT = { ingestJournal: "off" } as const;

export function withPeer(config?: ConfigInput): { peer: TestPeer; call: Call } {
  const ctx = {} as { peer: TestPeer; call: Call };
  beforeAll(async () => {
    ctx.peer = await startTestPeer({ config });
    ctx.call = await adminCall(ctx.peer);
  });
  afterAll(async () => {
    await ctx.peer?.stop();
  });
  return ctx;
}

export async function createMeasurement(call: Call, extra: Record<string, unknown> = {}, path = `${P}/measurements`) {
  const r = await call(path, {
    method: "POST",
    json: { basetime: BASETIME, basetime_type: "edge_rtc", edge_uuid: EDGE, protected: false, ...extra },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

export interface TestPoint {
  name: string;
  type: string;
  elapsed: bigint;
  payload: Uint8Array;
}

/** Chunks of one sequence: `chunks[i]` holds the points of sequence number `first + i`. */
export function chunksMessage(meas: string, seq: string, chunks: TestPoint[][], first = 1): pb.IStoreDataChunks {
  return {
    measUuid: meas,
    sequenceUuid: seq,
    chunks: chunks.map((points, i) => {
      const groups = new Map<string, pb.IStoreDataPointGroup>();
      for (const p of points) {
        const key = `${p.type}:${p.name}`;
        if (!groups.has(key)) groups.set(key, { dataId: { name: p.name, type: p.type }, dataPoints: [] });
        groups
          .get(key)!
          .dataPoints!.push({ elapsedTime: p.elapsed.toString() as unknown as number, payload: p.payload });
      }
      return { sequenceNumber: first + i, dataPointGroups: [...groups.values()] };
    }),
  };
}

export const protoBody = (m: pb.IStoreDataChunks) => Buffer.from(pb.StoreDataChunks.encode(m).finish());

/** The proto3 JSON form (lowerCamelCase, int64 as strings, bytes as base64). */
export function jsonBody(m: pb.IStoreDataChunks) {
  return {
    measUuid: m.measUuid,
    sequenceUuid: m.sequenceUuid,
    chunks: (m.chunks ?? []).map((c) => ({
      sequenceNumber: c.sequenceNumber,
      dataPointGroups: (c.dataPointGroups ?? []).map((g) => ({
        dataId: g.dataId,
        dataPoints: (g.dataPoints ?? []).map((p) => ({
          elapsedTime: String(p.elapsedTime),
          payload: Buffer.from(p.payload!).toString("base64"),
        })),
      })),
    })),
  };
}

export async function uploadProto(call: Call, m: pb.IStoreDataChunks, path = `${P}/measurements/sequences/chunks`) {
  return call(path, {
    method: "POST",
    headers: { "content-type": "application/vnd.iscp.v2.protobuf" },
    body: protoBody(m),
  });
}

export function randomPoints(n: number, names = ["1/a", "1/b"], seed = 1): TestPoint[] {
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31), x);
  return Array.from({ length: n }, (_, i) => {
    const payload = new Uint8Array(1 + (rnd() % 24));
    for (let j = 0; j < payload.length; j++) payload[j] = rnd() % 256;
    return {
      name: names[i % names.length]!,
      type: i % 3 === 0 ? "bytes" : "float64",
      elapsed: BigInt(i) * 1_000_000n + BigInt(rnd() % 1000),
      payload,
    };
  });
}

/** Splits the 8-byte little-endian length-prefixed stream into DataResponseProto messages. */
export function unframe(buf: Buffer): pb.DataResponseProto[] {
  const out: pb.DataResponseProto[] = [];
  for (let off = 0; off < buf.length; ) {
    const len = Number(buf.readBigUInt64LE(off));
    out.push(pb.DataResponseProto.decode(buf.subarray(off + 8, off + 8 + len)));
    off += 8 + len;
  }
  return out;
}

export const ndjson = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));

export const uuid = () => crypto.randomUUID();

/** A persisted upstream of the default project's edge, on a new stream and measurement, as the broker stores it. */
export const persistedUpstream = (): UpstreamRef => ({
  streamId: uuid(),
  sessionId: uuid(),
  projectUuid: DEFAULT_PROJECT,
  nodeId: EDGE,
  persist: true,
});

/** A measurement's sequences as `GET .../sequences` lists them. */
export async function sequencesOf(call: Call, meas: string): Promise<Array<Record<string, unknown>>> {
  return (await call(`${P}/measurements/${meas}/sequences`)).body.items;
}

/** The broker's chunk hook for `up` on the peer's measurements: what the agent is answered (undefined: stored). */
export function brokerChunkHook(peer: TestPeer, up: UpstreamRef) {
  const hooks = measurementHooks(peer.svc.measurements);
  // As the broker passes it (the subject is not used by storage).
  const info = { ...up, qos: QoS.RELIABLE } as Parameters<typeof hooks.onUpstreamChunk>[0];
  return (c: UpstreamChunkIn) => hooks.onUpstreamChunk(info, c);
}

/**
 * Counts the chunk commits (transactions) and the statements each sent through the Db layer; the chunk log's
 * compactions, which run when due between commits, are left out.
 */
export function countCommits(db: Db, drain: () => Promise<void>) {
  const sent: string[][] = [];
  const original = db.transaction.bind(db);
  db.transaction = (fn, opts) => {
    const i = sent.push([]) - 1;
    const counted = (tx: Queryable): Queryable => ({
      dialect: tx.dialect,
      run: (sql, p) => (sent[i]!.push(sql), tx.run(sql, p)),
      get: (sql, p) => (sent[i]!.push(sql), tx.get(sql, p)),
      all: (sql, p) => (sent[i]!.push(sql), tx.all(sql, p)),
      exec: (sql) => (sent[i]!.push(sql), tx.exec(sql)),
    });
    return original((tx) => fn(counted(tx)), opts);
  };
  // A compaction's transaction: on SQLite its first statement names its temporary table of packs.
  const compaction = (sqls: string[]) => sqls.some((s) => /meas_packs|DELETE FROM meas_chunk_log/.test(s));
  return {
    /** Once every commit and compaction under way is done (a compaction still waiting has sent nothing yet). */
    async commits() {
      return (await this.statements()).map((sqls) => sqls.length);
    },
    /** The statements of each commit, once every commit under way is done. */
    async statements() {
      await drain();
      return sent.filter((sqls) => !compaction(sqls));
    },
    restore: () => void (db.transaction = original),
  };
}
