// A downgrade: cloud-peer started on a data directory a newer version migrated refuses to start, says why, and
// leaves the database as it was.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { SqliteDb as Db } from "../../../cloud/database/db.js";
import { startTestPeer } from "../harness.js";

const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-downgrade-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it("refuses a database with a migration this version does not know, exit 2, nothing changed", async () => {
  const peer = await startTestPeer({ dataDir: dir });
  await peer.stop();
  // What a later version would have left: one more migration recorded (and its table).
  const db = await Db.open(path.join(dir, "cloud.db"));
  await db.exec("CREATE TABLE future_things (id INTEGER PRIMARY KEY)");
  await db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
    999,
    "future things",
    new Date().toISOString(),
  ]);
  const before = await db.all("SELECT * FROM schema_migrations ORDER BY version");
  await db.close();

  const r = await run(
    process.execPath,
    [path.resolve("bin/cloud-peer.mjs"), "--listen", "127.0.0.1:0", "--data", dir],
    {
      env: { ...process.env, CLOUD_LOG_LEVEL: "silent" },
    },
  ).catch((e: { code: number; stdout: string; stderr: string }) => e);
  expect((r as { code?: number }).code).toBe(2);
  expect(r.stderr).toMatch(
    /^cloud-peer: the database was migrated by a newer cloud-peer: it has 999 \(future things\), which this version does not know \(it knows up to \d+\); run the newer version again, or restore a backup taken before the upgrade\n$/,
  );
  expect(r.stdout).not.toContain("listening");

  const after = await Db.open(path.join(dir, "cloud.db"));
  expect(await after.all("SELECT * FROM schema_migrations ORDER BY version")).toEqual(before);
  await after.close();
}, 120_000);
