// Once a stream's rows are known from earlier commits, its chunks are stored by one literal SQL script per
// batch (chunk-script.ts). What the API shows must be what the parameter-bound transaction gives: payloads
// byte for byte (in rows and in files), names with quotes, counters, status; and wherever the script's
// assumptions fail (a number stored before, the measurement ended or deleted, a value with no literal, a
// refused row) it rolls back and the transaction path answers.
import { describe, expect, it } from "vitest";
import type { UpstreamChunkIn, UpstreamRef } from "../../../cloud/measurements/ingest/upstream-store.js";
import { scanUpstreamChunkMessage } from "../../../proto/wire/chunk-scan.js";
import { encodeMessage } from "../../../proto/wire/message.js";
import type { SqliteDb } from "../../../cloud/storage/db.js";
import { DEFAULT_PROJECT, EDGE, P, ndjson, uuid, withPeer } from "./helpers.js";

type Point = { name: string; type?: string; payload: Buffer };
const chunk = (n: number, points: Point[]): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: points.map((p) => ({ dataId: { name: p.name, type: p.type ?? "t" }, dataPoints: [{ elapsedTime: BigInt(n) * 1000n, payload: p.payload }] })),
});
const small = (n: number, name = "a") => chunk(n, [{ name, payload: Buffer.from(`${name}@${n}`) }]);

/** As the broker hands a received chunk over: each group's points as the frame's bytes (chunk-scan.ts). */
function received(n: number, points: Point[]): UpstreamChunkIn {
  const frame = encodeMessage(
    { upstreamChunk: { streamIdAlias: 1, streamChunk: { sequenceNumber: n, dataPointGroups: points.map((p) => ({ dataId: { name: p.name, type: p.type ?? "t" }, dataPoints: [{ elapsedTime: n * 1000, payload: p.payload }] })) } } },
    "proto",
  );
  const scanned = scanUpstreamChunkMessage(frame)!;
  return { sequenceNumber: n, dataPointGroups: scanned.groups.map((g) => ({ dataId: g.dataId!, get dataPoints() { return g.dataPoints.map((p) => ({ elapsedTime: BigInt(String(p.elapsedTime)), payload: p.payload! })); }, raw: g })) };
}

describe("measurements: a steady stream's chunks as one script", () => {
  const t = withPeer();
  const call = (path: string, init?: Parameters<typeof t.call>[1]) => t.call(path, init);
  const store = (up: UpstreamRef, c: UpstreamChunkIn) => t.peer.svc.measurements.upstream.storeChunk(up, c);
  const sequences = async (m: string) => (await call(`${P}/measurements/${m}/sequences`)).body.items as Array<Record<string, unknown>>;
  const measurement = async (m: string) => (await call(`${P}/measurements/${m}`)).body as Record<string, any>;
  const stream = (): UpstreamRef => ({ streamId: uuid(), sessionId: uuid(), projectUuid: DEFAULT_PROJECT, nodeId: EDGE, persist: true });

  /** Counts the scripts that committed and those that rolled back. */
  function scripts() {
    const db = t.peer.svc.db as SqliteDb;
    const seen = { committed: 0, failed: 0 };
    const original = db.script.bind(db);
    db.script = async (statements) => {
      try {
        await original(statements);
        seen.committed++;
      } catch (e) {
        seen.failed++;
        throw e;
      }
    };
    return { seen, restore: () => void (db.script = original) };
  }

  /** The scripts that committed and those that rolled back while fn ran. */
  async function scriptsDuring(fn: () => Promise<void>): Promise<{ committed: number; failed: number }> {
    const s = scripts();
    try {
      await fn();
      return s.seen;
    } finally {
      s.restore();
    }
  }

  /** Chunks 1 and 2: the first creates the measurement, the second's commit makes its rows known. */
  async function steady(up: UpstreamRef): Promise<void> {
    expect(await store(up, small(1))).toBe("ok");
    expect(await store(up, small(2))).toBe("ok");
  }

  it("stores chunks once their rows are known, and reads them back byte for byte, from rows and from files", async () => {
    const up = stream();
    const big = Buffer.from(Buffer.alloc(40 * 1024).map((_, i) => (i * 7) & 0xff));
    const quoted = "it's a \"name\"'); DROP TABLE meas_chunks; --";
    const s = scripts();
    try {
      await steady(up);
      expect(s.seen).toEqual({ committed: 0, failed: 0 });
      expect(await store(up, chunk(3, [{ name: quoted, payload: Buffer.from([0, 39, 255]) }, { name: "a", payload: Buffer.from("a@3") }]))).toBe("ok");
      expect(await store(up, chunk(4, [{ name: "big", type: "raw", payload: big }]))).toBe("ok");
      expect(s.seen).toEqual({ committed: 2, failed: 0 });
    } finally {
      s.restore();
    }
    expect(await sequences(up.sessionId)).toMatchObject([{ uuid: up.streamId, received_chunks_count: 4, received_data_points: 5 }]);
    expect(await measurement(up.sessionId)).toMatchObject({ status: "measuring", ended: false, max_elapsed_time: expect.any(Number) });
    const names = ((await call(`${P}/data_ids?name=${up.sessionId}`)).body.items as Array<{ data_id: string }>).map((d) => d.data_id).sort();
    expect(names).toEqual(["a", "big", quoted].sort());
    const lines = ndjson((await call(`${P}/data?name=${up.sessionId}&time_format=ns`)).body as string);
    const got = lines.map((l) => `${l.data_id} ${Buffer.from(l.data.d, "base64").toString("hex")}`);
    const hex = (s: string) => Buffer.from(s).toString("hex");
    expect(got.sort()).toEqual([`a ${hex("a@1")}`, `a ${hex("a@2")}`, `${quoted} 0027ff`, `a ${hex("a@3")}`, `big ${big.toString("hex")}`].sort());
  });

  it("stores large payloads of batch after batch intact (their buffers are reused once a batch's writes settled)", async () => {
    const up = stream();
    await steady(up);
    const payload = (n: number) => Buffer.alloc(100 * 1024, n);
    const send = (from: number) => Promise.all(Array.from({ length: 8 }, (_, i) => store(up, received(from + i, [{ name: "big", payload: payload(from + i) }]))));
    expect(await send(3)).toEqual(Array(8).fill("ok"));
    expect(await send(11)).toEqual(Array(8).fill("ok"));
    const lines = ndjson((await call(`${P}/data?name=${up.sessionId}`)).body as string).filter((l) => l.data_id === "big");
    const got = lines.map((l) => Buffer.from(l.data.d, "base64")).map((b) => [b.length, b[0], b.every((x) => x === b[0])]);
    expect(got).toEqual(Array.from({ length: 16 }, (_, i) => [100 * 1024, i + 3, true]));
  });

  it("answers a number stored before as skipped and counts it once; the next chunks go on in scripts", async () => {
    const up = stream();
    await steady(up);
    const s = scripts();
    try {
      expect(await store(up, small(3))).toBe("ok");
      expect(await store(up, small(2))).toBe("skipped");
      expect(await store(up, small(4))).toBe("ok");
      expect(await store(up, small(5))).toBe("ok");
      // 3 in a script; 2 rolled back (primary key), then answered by the transaction, which learned the rows again.
      expect(s.seen).toEqual({ committed: 3, failed: 1 });
    } finally {
      s.restore();
    }
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 5, received_data_points: 5 }]);
  });

  it("takes a measurement ended mid-stream through the transaction, so its status follows what the edge said it sent", async () => {
    const up = stream();
    await steady(up);
    expect(await store(up, small(3))).toBe("ok");
    const m = up.sessionId;
    expect((await call(`${P}/measurements/${m}/sequences/${up.streamId}`, { method: "PATCH", json: { expected_data_points: 4, final_sequence_number: 4 } })).status).toBe(200);
    expect((await call(`${P}/measurements/${m}/end`, { method: "PUT" })).body).toEqual({ status: "resending" });
    expect(await scriptsDuring(async () => expect(await store(up, small(4))).toBe("ok"))).toEqual({ committed: 0, failed: 1 });
    expect(await measurement(m)).toMatchObject({ ended: true, completed: true, status: "finished", sequences: { status: "completed", received_data_points: 4 } });
  });

  it("makes a measurement deleted mid-stream again, with only the chunks sent after", async () => {
    const up = stream();
    await steady(up);
    expect(await store(up, small(3))).toBe("ok");
    expect((await call(`${P}/measurements/${up.sessionId}`, { method: "DELETE" })).status).toBe(204);
    expect(await scriptsDuring(async () => expect(await store(up, small(4, "b"))).toBe("ok"))).toEqual({ committed: 0, failed: 1 });
    expect(await sequences(up.sessionId)).toMatchObject([{ uuid: up.streamId, received_chunks_count: 1, received_data_points: 1 }]);
    expect(((await call(`${P}/data_ids?name=${up.sessionId}`)).body.items as Array<{ data_id: string }>).map((d) => d.data_id)).toEqual(["b"]);
  });

  it("stores a name with a NUL character (no SQL literal has one) through the transaction", async () => {
    const up = stream();
    await steady(up);
    expect(await scriptsDuring(async () => expect(await store(up, small(3, "nul\u0000name"))).toBe("ok"))).toEqual({ committed: 0, failed: 0 });
    const lines = ndjson((await call(`${P}/data?name=${up.sessionId}`)).body as string);
    expect(lines.map((l) => l.data_id)).toEqual(["a", "a", "nul\u0000name"]);
  });

  it("stores nothing of a script whose rows were refused; the transaction path answers, and the stream goes on", async () => {
    const up = stream();
    await steady(up);
    await t.peer.svc.db.exec(
      "CREATE TEMP TRIGGER refuse_script_payload BEFORE INSERT ON meas_chunk_payloads WHEN NEW.sequence_number = 3 BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    const s = scripts();
    try {
      await expect(store(up, small(3, "c"))).rejects.toThrow(/refused/);
      expect(s.seen).toEqual({ committed: 0, failed: 1 });
    } finally {
      await t.peer.svc.db.exec("DROP TRIGGER refuse_script_payload");
      s.restore();
    }
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 2, received_data_points: 2 }]);
    expect(((await call(`${P}/data_ids?name=${up.sessionId}`)).body.items as unknown[]).length).toBe(1);
    expect(await store(up, small(3, "c"))).toBe("ok");
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 3, received_data_points: 3 }]);
  });
});
