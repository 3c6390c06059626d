// Chunk payloads live in one append-only file per sequence beside the database (payload-files.ts):
// written once, read back intact, removed with their measurement, swept after a crash, and rows
// written before the files existed still read from the row.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { alignUp, O_DIRECT } from "../../../cloud/measurements/storage/direct-write.js";
import { INLINE_MAX, PayloadFiles } from "../../../cloud/measurements/storage/payload-files.js";
import { SqliteDb as Db } from "../../../cloud/database/db.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  adminToken,
  caller,
  chunksMessage,
  expectError,
  createMeasurement,
  ndjson,
  P,
  randomPoints,
  uploadProto,
  uuid,
  type Call,
  type TestPoint,
} from "./helpers.js";

/** Points with payloads too large to stay in their row (INLINE_MAX), so their chunks go to payload files. */
function bigPoints(n: number, names: string[], seed: number): TestPoint[] {
  return randomPoints(n, names, seed).map((p, i) => ({
    ...p,
    payload: Buffer.alloc(INLINE_MAX + 1 + i, p.payload[0]! ^ i),
  }));
}

let dir: string;
let peer: TestPeer | undefined;
let call: Call;

let starts = 0;
async function start(): Promise<void> {
  peer = await startTestPeer({ dataDir: dir });
  call = caller(peer, await adminToken(peer, `tests ${++starts}`));
}
async function stop(): Promise<void> {
  await peer?.stop();
  peer = undefined;
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "payload-files-"));
  await start();
});
afterEach(async () => {
  await stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const chunkFiles = () => fs.readdirSync(path.join(dir, "chunks")).sort();

/** Whether the file system under `d` takes O_DIRECT (tmpfs does not). */
function directTaken(d: string): boolean {
  const probe = path.join(d, ".direct-probe");
  try {
    fs.closeSync(fs.openSync(probe, fs.constants.O_RDWR | fs.constants.O_CREAT | O_DIRECT));
    return O_DIRECT !== 0;
  } catch {
    return false;
  } finally {
    fs.rmSync(probe, { force: true });
  }
}
/** The size one append of n bytes gives a new file: padded to a 4 KiB block where appends are direct. */
const filed = (n: number) => (directTaken(dir) ? alignUp(n) : n);
const sequenceIds = async (measUuid: string) =>
  (
    await peer!.svc.db.all<{ id: number }>("SELECT id FROM meas_sequences WHERE measurement_uuid = ? ORDER BY id", [
      measUuid,
    ])
  ).map((r) => r.id);

/** The measurement's points as the data endpoint returns them, as "name payload(base64)", sorted. */
async function readBack(measUuid: string): Promise<string[]> {
  const r = await call(`${P}/data?name=${measUuid}`);
  expect(r.status).toBe(200);
  const lines = typeof r.body === "string" ? ndjson(r.body) : r.body === undefined ? [] : [r.body];
  return lines
    .map((l) => (l.data.d === undefined ? `error ${JSON.stringify(l.data)}` : `${l.data_id} ${l.data.d}`))
    .sort();
}
const expected = (pts: TestPoint[]) => pts.map((p) => `${p.name} ${Buffer.from(p.payload).toString("base64")}`).sort();

describe("chunk payload files", () => {
  it("writes each payload once, to its sequence's file and not into the database, and reads it back intact", async () => {
    const m = await createMeasurement(call);
    const a = bigPoints(40, ["1/a", "1/b"], 3);
    const b = bigPoints(10, ["2/c"], 4);
    const first = await uploadProto(call, chunksMessage(m.uuid, uuid(), [a.slice(0, 20), a.slice(20)]));
    expect(first.status).toBe(200);
    expect((await uploadProto(call, chunksMessage(m.uuid, uuid(), [b]))).status).toBe(200);

    const ids = await sequenceIds(m.uuid);
    expect(chunkFiles()).toEqual(ids.map((id) => `${id}.chunks`).sort());
    const rows = await peer!.svc.db.all<{ sequence_id: number; stored: number; file_length: number }>(
      "SELECT sequence_id, length(payload) AS stored, file_length FROM meas_chunk_payloads ORDER BY sequence_id, sequence_number",
    );
    expect(rows.map((r) => r.stored)).toEqual([0, 0, 0]);
    // Each upload is one append: its payloads back to back, padded to a 4 KiB block where writes are direct.
    for (const id of ids) {
      const size = fs.statSync(path.join(dir, "chunks", `${id}.chunks`)).size;
      expect(size).toBe(filed(rows.filter((r) => r.sequence_id === id).reduce((n, r) => n + r.file_length, 0)));
    }
    expect(await readBack(m.uuid)).toEqual(expected([...a, ...b]));
  });

  it("removes a deleted measurement's files, and at the next start sweeps files whose sequence is gone", async () => {
    const gone = await createMeasurement(call);
    const kept = await createMeasurement(call);
    const pts = bigPoints(12, ["1/a"], 5);
    await uploadProto(call, chunksMessage(gone.uuid, uuid(), [pts.slice(0, 6), pts.slice(6)]));
    await uploadProto(call, chunksMessage(kept.uuid, uuid(), [pts]));
    const [goneId] = await sequenceIds(gone.uuid);
    const [keptId] = await sequenceIds(kept.uuid);
    expect(chunkFiles()).toEqual([`${goneId}.chunks`, `${keptId}.chunks`].sort());

    expect((await call(`${P}/measurements/${gone.uuid}`, { method: "DELETE" })).status).toBe(204);
    expect(chunkFiles()).toEqual([`${keptId}.chunks`]);

    // As a crash between a delete's commit and the file's removal leaves it.
    fs.writeFileSync(path.join(dir, "chunks", `${keptId! + 1000}.chunks`), Buffer.alloc(4096, 1));
    await stop();
    await start();
    expect(chunkFiles()).toEqual([`${keptId}.chunks`]);
    expect(await readBack(kept.uuid)).toEqual(expected(pts));
  });

  it("appends after bytes a crash left unreferenced at a file's end", async () => {
    const m = await createMeasurement(call);
    const seq = uuid();
    const pts = bigPoints(30, ["1/a", "1/b"], 6);
    await uploadProto(call, chunksMessage(m.uuid, seq, [pts.slice(0, 10)]));
    const [id] = await sequenceIds(m.uuid);
    await stop();
    // Written and synced, but the transaction never committed.
    fs.appendFileSync(path.join(dir, "chunks", `${id}.chunks`), Buffer.alloc(10_000, 0xff));
    await start();
    expect((await uploadProto(call, chunksMessage(m.uuid, seq, [pts.slice(10, 20), pts.slice(20)], 2))).status).toBe(
      200,
    );
    expect(await readBack(m.uuid)).toEqual(expected(pts));
    const offsets = await peer!.svc.db.all<{ file_offset: number }>(
      "SELECT file_offset FROM meas_chunk_payloads WHERE sequence_id = ? ORDER BY sequence_number",
      [id!],
    );
    expect(offsets[1]!.file_offset).toBeGreaterThanOrEqual(offsets[0]!.file_offset + 10_000);
  });

  it("reads a payload held in its row (written before payload files) beside ones in files", async () => {
    const old = await createMeasurement(call);
    const pts = bigPoints(8, ["1/a"], 7);
    await uploadProto(call, chunksMessage(old.uuid, uuid(), [pts.slice(0, 4), pts.slice(4)]));
    const [id] = await sequenceIds(old.uuid);
    await stop();
    // The first chunk as migration 403 found it: payload in the row, no file reference.
    const file = path.join(dir, "chunks", `${id}.chunks`);
    const db = await Db.open(path.join(dir, "cloud.db"));
    const first = (await db.get<{ file_offset: number; file_length: number }>(
      "SELECT file_offset, file_length FROM meas_chunk_payloads WHERE sequence_id = ? AND sequence_number = 1",
      [id!],
    ))!;
    const bytes = fs.readFileSync(file).subarray(first.file_offset, first.file_offset + first.file_length);
    await db.run(
      "UPDATE meas_chunk_payloads SET payload = ?, file_offset = NULL, file_length = NULL WHERE sequence_id = ? AND sequence_number = 1",
      [bytes, id!],
    );
    await db.close();
    fs.writeFileSync(
      file,
      Buffer.concat([Buffer.alloc(first.file_length, 0xff), fs.readFileSync(file).subarray(first.file_length)]),
    );
    await start();
    expect(await readBack(old.uuid)).toEqual(expected(pts));
  });

  it("keeps each of many sequences' payloads apart (more files than it keeps open)", async () => {
    const m = await createMeasurement(call);
    const all: TestPoint[] = [];
    for (let s = 0; s < 70; s++) {
      const pts = bigPoints(3, [`s/${s}`], 100 + s);
      all.push(...pts);
      expect((await uploadProto(call, chunksMessage(m.uuid, uuid(), [pts.slice(0, 1), pts.slice(1)]))).status).toBe(
        200,
      );
    }
    expect(chunkFiles()).toHaveLength(70);
    expect(await readBack(m.uuid)).toEqual(expected(all));
  });

  it("keeps a payload of up to one page in its row, beside larger ones in the file", async () => {
    const m = await createMeasurement(call);
    const small = randomPoints(6, ["1/a"], 8);
    const big = bigPoints(2, ["1/b"], 9);
    expect(
      (await uploadProto(call, chunksMessage(m.uuid, uuid(), [small.slice(0, 3), big, small.slice(3)]))).status,
    ).toBe(200);
    const rows = await peer!.svc.db.all<{ stored: number; file_length: number | null }>(
      "SELECT length(payload) AS stored, file_length FROM meas_chunk_payloads ORDER BY sequence_number",
    );
    expect(rows.map((r) => [r.stored > 0, r.file_length !== null])).toEqual([
      [true, false],
      [false, true],
      [true, false],
    ]);
    expect(fs.statSync(path.join(dir, "chunks", `${(await sequenceIds(m.uuid))[0]}.chunks`)).size).toBe(
      filed(rows[1]!.file_length!),
    );
    expect(await readBack(m.uuid)).toEqual(expected([...small, ...big]));
  });

  it("reports a chunk whose payload file was cut short in-band, and serves the chunks before it", async () => {
    const m = await createMeasurement(call);
    const pts = bigPoints(6, ["1/a"], 17);
    await uploadProto(call, chunksMessage(m.uuid, uuid(), [pts.slice(0, 2), pts.slice(2, 4), pts.slice(4)]));
    const [id] = await sequenceIds(m.uuid);
    const last = (await peer!.svc.db.get<{ file_offset: number }>(
      "SELECT file_offset FROM meas_chunk_payloads WHERE sequence_number = 3",
    ))!;
    fs.truncateSync(path.join(dir, "chunks", `${id}.chunks`), last.file_offset + 1);
    const lines = await readBack(m.uuid);
    expect(lines.filter((l) => l.startsWith("1/a "))).toHaveLength(4);
    const errors = lines.filter((l) => l.startsWith("error "));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/ends before byte/);
  });

  it("answers 507 in the error shape while the disk is full, stores nothing, and stores once there is room", async () => {
    const m = await createMeasurement(call);
    const seq = uuid();
    // The sequence exists before its first chunk, so its payload file is not there yet: make it a full disk.
    expect(
      (await call(`${P}/measurements/${m.uuid}/sequences/${seq}`, { method: "PUT", json: { expected_data_points: 2 } }))
        .status,
    ).toBe(200);
    const [id] = await sequenceIds(m.uuid);
    const file = path.join(dir, "chunks", `${id}.chunks`);
    fs.symlinkSync("/dev/full", file);
    const pts = bigPoints(2, ["1/a"], 11);
    const full = await uploadProto(call, chunksMessage(m.uuid, seq, [pts]));
    expectError(full, 507, "insufficient_storage");
    expect(full.headers.get("retry-after")).toBe("60");
    expect((await call(`${P}/measurements/${m.uuid}/sequences/${seq}`)).body).toMatchObject({
      received_chunks_count: 0,
      received_data_points: 0,
    });

    fs.unlinkSync(file);
    expect((await uploadProto(call, chunksMessage(m.uuid, seq, [pts]))).status).toBe(200);
    expect(await readBack(m.uuid)).toEqual(expected(pts));
  });
});

describe("payload file appends", () => {
  const pattern = (n: number, seed: number) => Buffer.from(Buffer.alloc(n).map((_, i) => (i * 31 + seed) & 0xff));

  /** Two appends to one file (the first crossing the 4 MiB staging size), read back at their offsets. */
  async function appendTwice(d: string) {
    const files = await PayloadFiles.open(d);
    try {
      const first = [pattern(5 * 1024 * 1024 + 3, 1), pattern(100_001, 2), pattern(17_000, 3)];
      const second = [pattern(70_000, 4)];
      const a = await files.append(7, first);
      await a.synced;
      const b = await files.append(7, second);
      await b.synced;
      const rows = [
        ...first.map((p, i) => ({ sequence_id: 7, file_offset: a.offsets[i]!, file_length: p.length })),
        { sequence_id: 7, file_offset: b.offsets[0]!, file_length: 70_000 },
      ];
      const got = await files.read(rows);
      expect(
        got.map((r) => r.status === "fulfilled" && r.value.equals([...first, ...second][got.indexOf(r)]!)),
      ).toEqual([true, true, true, true]);
      return { offsets: [...a.offsets, ...b.offsets], size: fs.statSync(path.join(d, "7.chunks")).size };
    } finally {
      await files.close();
    }
  }

  it("writes direct appends block-aligned and padded, and reads every payload back at its offset", async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "payload-direct-"));
    try {
      const { offsets, size } = await appendTwice(d);
      const firstEnd = 5 * 1024 * 1024 + 3 + 100_001 + 17_000;
      if (directTaken(d)) {
        expect(offsets).toEqual([0, 5 * 1024 * 1024 + 3, 5 * 1024 * 1024 + 3 + 100_001, alignUp(firstEnd)]);
        expect(size).toBe(alignUp(alignUp(firstEnd) + 70_000));
      } else expect(size).toBe(firstEnd + 70_000);
    } finally {
      fs.rmSync(d, { recursive: true, force: true });
    }
  });

  it("shares its few staging areas: twenty files appended at once all read back intact", async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "payload-many-"));
    const files = await PayloadFiles.open(d);
    try {
      const payloads = Array.from({ length: 20 }, (_, i) => pattern(4 * 1024 * 1024 + 1000 * i, i));
      const appended = await Promise.all(payloads.map((p, i) => files.append(100 + i, [p])));
      await Promise.all(appended.map((a) => a.synced));
      const got = await files.read(
        payloads.map((p, i) => ({
          sequence_id: 100 + i,
          file_offset: appended[i]!.offsets[0]!,
          file_length: p.length,
        })),
      );
      expect(got.map((r, i) => r.status === "fulfilled" && r.value.equals(payloads[i]!))).toEqual(Array(20).fill(true));
    } finally {
      await files.close();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });

  it("appends buffered, unpadded, where the file system refuses O_DIRECT (tmpfs)", async () => {
    const d = fs.mkdtempSync(path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "payload-buffered-"));
    try {
      const { offsets, size } = await appendTwice(d);
      const firstEnd = 5 * 1024 * 1024 + 3 + 100_001 + 17_000;
      if (!directTaken(d)) {
        expect(offsets).toEqual([0, 5 * 1024 * 1024 + 3, 5 * 1024 * 1024 + 3 + 100_001, firstEnd]);
        expect(size).toBe(firstEnd + 70_000);
      }
    } finally {
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
