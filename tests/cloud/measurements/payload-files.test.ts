// Chunk payloads live in one append-only file per sequence beside the database (payload-files.ts):
// written once, read back intact, removed with their measurement, swept after a crash, and rows
// written before the files existed still read from the row.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminCall, chunksMessage, createMeasurement, ndjson, P, randomPoints, uploadProto, uuid, type Call, type TestPoint } from "./helpers.js";

let dir: string;
let peer: TestPeer | undefined;
let call: Call;

async function start(): Promise<void> {
  peer = await startTestPeer({ dataDir: dir });
  call = await adminCall(peer);
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
const sequenceIds = async (measUuid: string) =>
  (await peer!.svc.db.all<{ id: number }>("SELECT id FROM meas_sequences WHERE measurement_uuid = ? ORDER BY id", [measUuid])).map((r) => r.id);

/** The measurement's points as the data endpoint returns them, as "name payload(base64)", sorted. */
async function readBack(measUuid: string): Promise<string[]> {
  const r = await call(`${P}/data?name=${measUuid}`);
  expect(r.status).toBe(200);
  const lines = typeof r.body === "string" ? ndjson(r.body) : r.body === undefined ? [] : [r.body];
  return lines.map((l) => (l.data.d === undefined ? `error ${JSON.stringify(l.data)}` : `${l.data_id} ${l.data.d}`)).sort();
}
const expected = (pts: TestPoint[]) => pts.map((p) => `${p.name} ${Buffer.from(p.payload).toString("base64")}`).sort();

describe("chunk payload files", () => {
  it("writes each payload once, to its sequence's file and not into the database, and reads it back intact", async () => {
    const m = await createMeasurement(call);
    const a = randomPoints(40, ["1/a", "1/b"], 3);
    const b = randomPoints(10, ["2/c"], 4);
    const first = await uploadProto(call, chunksMessage(m.uuid, uuid(), [a.slice(0, 20), a.slice(20)]));
    expect(first.status).toBe(200);
    expect((await uploadProto(call, chunksMessage(m.uuid, uuid(), [b]))).status).toBe(200);

    const ids = await sequenceIds(m.uuid);
    expect(chunkFiles()).toEqual(ids.map((id) => `${id}.chunks`).sort());
    const rows = await peer!.svc.db.all<{ sequence_id: number; stored: number; file_length: number }>(
      "SELECT sequence_id, length(payload) AS stored, file_length FROM meas_chunk_payloads ORDER BY sequence_id, sequence_number",
    );
    expect(rows.map((r) => r.stored)).toEqual([0, 0, 0]);
    for (const id of ids) {
      const size = fs.statSync(path.join(dir, "chunks", `${id}.chunks`)).size;
      expect(size).toBe(rows.filter((r) => r.sequence_id === id).reduce((n, r) => n + r.file_length, 0));
    }
    expect(await readBack(m.uuid)).toEqual(expected([...a, ...b]));
  });
});
