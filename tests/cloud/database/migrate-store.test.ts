// cloud-peer migrate-store: an SQLite peer's data (accounts, tokens, signing keys, measurements, payloads in rows
// and in payload files) copied to an empty PostgreSQL database serves the same answers there; a non-empty
// target is refused.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INLINE_MAX } from "../../../cloud/measurements/storage/payload-files.js";
import { startTestPeer } from "../harness.js";
import {
  adminToken,
  caller,
  chunksMessage,
  createMeasurement,
  ndjson,
  P,
  randomPoints,
  uploadProto,
  uuid,
  type Call,
} from "../measurements/helpers.js";
import { startPostgres, type PgServer } from "../../support/postgres.js";

const run = promisify(execFile);
const BIN = path.resolve("bin/cloud-peer.mjs");

async function readBack(call: Call, measUuid: string): Promise<string[]> {
  const r = await call(`${P}/data?name=${measUuid}`);
  expect(r.status).toBe(200);
  return ndjson(r.body as string)
    .map((l) => `${l.data_id} ${l.data.d}`)
    .sort();
}

describe("cloud-peer migrate-store", () => {
  let server: PgServer;
  let dir: string;
  beforeAll(async () => {
    server = await startPostgres();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "migrate-store-"));
  }, 120_000);
  afterAll(() => {
    server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("moves an SQLite peer's data to PostgreSQL, where it serves the same answers; refuses a non-empty target", async () => {
    // The SQLite peer: a token, a measurement with small payloads (in rows) and large ones (in payload files).
    const sqlite = await startTestPeer({ dataDir: dir, config: { database: "sqlite:" } });
    const token = await adminToken(sqlite);
    const call = caller(sqlite, token);
    const m = await createMeasurement(call, { name: "moved" });
    const small = randomPoints(6, ["1/a"], 1);
    const big = randomPoints(3, ["2/b"], 2).map((p, i) => ({
      ...p,
      payload: Buffer.alloc(INLINE_MAX + 10 + i, i + 1),
    }));
    expect((await uploadProto(call, chunksMessage(m.uuid, uuid(), [small.slice(0, 3), small.slice(3)]))).status).toBe(
      200,
    );
    expect((await uploadProto(call, chunksMessage(m.uuid, uuid(), [big]))).status).toBe(200);
    expect(fs.readdirSync(path.join(dir, "chunks"))).toHaveLength(1);
    const before = await readBack(call, m.uuid);
    const jwks = await (await sqlite.api("/auth/oauth2/jwks")).json();
    await sqlite.stop();

    const url = await server.createDatabase();
    const { stdout } = await run(process.execPath, [BIN, "migrate-store", "--from", `sqlite:${dir}`, "--to", url]);
    expect(stdout).toMatch(/^meas_chunk_payloads: 3 rows$/m);
    expect(stdout).toMatch(/^api_tokens: 1 rows$/m);

    const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), "migrate-store-pg-"));
    const pg = await startTestPeer({ dataDir: pgDir, config: { database: url } });
    try {
      const moved = caller(pg, token);
      expect(pg.svc.db.dialect).toBe("postgres");
      expect(await readBack(moved, m.uuid)).toEqual(before);
      expect((await moved(`${P}/measurements/${m.uuid}`)).body).toMatchObject({ name: "moved" });
      expect(await (await pg.api("/auth/oauth2/jwks")).json()).toEqual(jwks);
      // Identity sequences continue after the copied ids: new rows go in.
      expect((await uploadProto(moved, chunksMessage(m.uuid, uuid(), [randomPoints(2, ["3/c"], 3)]))).status).toBe(200);
      expect(await adminToken(pg, "after the move")).toMatch(/./);
    } finally {
      await pg.stop();
      fs.rmSync(pgDir, { recursive: true, force: true });
    }

    const again = await run(process.execPath, [BIN, "migrate-store", "--from", `sqlite:${dir}`, "--to", url]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining("the target database is not empty") });
  });
});
