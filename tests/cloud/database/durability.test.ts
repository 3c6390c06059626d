// What an acknowledged write survives (CLOUD_DURABILITY): by default every SQLite commit is fsynced
// (synchronous = FULL) and payload files, with the directories they are created in, are fsynced before the
// commit that references them; process-crash relaxes SQLite to NORMAL. A bad value stops the start.
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import type { FileHandle } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../cloud/config.js";
import { fsSyncs, PayloadFiles, type PayloadSyncs } from "../../../cloud/measurements/storage/payload-files.js";
import { SqliteDb, type Db } from "../../../cloud/database/db.js";
import { startTestPeer } from "../harness.js";

const BIN = path.resolve("bin/cloud-peer.mjs");
const SYNC_FULL = 2;
const SYNC_NORMAL = 1;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "durability-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const synchronous = async (db: Db) => (await db.get<{ synchronous: number }>("PRAGMA synchronous"))!.synchronous;

describe("SQLite commits", () => {
  it("are fsynced by default (synchronous = FULL), in a running peer and in Db.open", async () => {
    expect(loadConfig({}, {}).durability).toBe("power-loss");
    const peer = await startTestPeer({ dataDir: dir });
    try {
      expect(await synchronous(peer.svc.db)).toBe(SYNC_FULL);
    } finally {
      await peer.close();
    }
    const db = await SqliteDb.open(path.join(dir, "plain.db"));
    try {
      expect(await synchronous(db)).toBe(SYNC_FULL);
    } finally {
      await db.close();
    }
  });

  it("CLOUD_DURABILITY=process-crash gives synchronous = NORMAL", async () => {
    const config = loadConfig(
      { listen: "127.0.0.1:0", dataDir: dir, logLevel: "silent", adminPassword: "Admin-password-1" },
      { CLOUD_DURABILITY: "process-crash" },
    );
    expect(config.durability).toBe("process-crash");
    const peer = await startTestPeer({ dataDir: dir, config: { durability: "process-crash" } });
    try {
      expect(await synchronous(peer.svc.db)).toBe(SYNC_NORMAL);
    } finally {
      await peer.close();
    }
  });

  it("refuses an unknown value with one clear line at start, and logs the one in force", async () => {
    expect(() => loadConfig({}, { CLOUD_DURABILITY: "fast" })).toThrow(
      'invalid CLOUD_DURABILITY "fast": expected power-loss or process-crash',
    );
    const env = {
      ...process.env,
      CLOUD_LISTEN: "127.0.0.1:0",
      CLOUD_DATA: dir,
      CLOUD_LOG_LEVEL: "info",
      CLOUD_ADMIN_PASSWORD: "Admin-password-1",
    };
    const bad = await promisify(execFile)(process.execPath, [BIN], {
      env: { ...env, CLOUD_DURABILITY: "none" },
      timeout: 60_000,
    }).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr.trim()).toBe(
      'cloud-peer: invalid CLOUD_DURABILITY "none": expected power-loss or process-crash',
    );

    const child = spawn(process.execPath, [BIN], {
      env: { ...env, CLOUD_DURABILITY: "process-crash" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      let out = "";
      const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start line in ${out}`)), 60_000);
        child.stdout.on("data", (b: Buffer) => {
          out += b.toString();
          const found = out.split("\n").find((l) => l.includes('"cloud peer listening"'));
          if (found) {
            clearTimeout(timer);
            resolve(JSON.parse(found) as Record<string, unknown>);
          }
        });
      });
      expect(line.durability).toBe("process-crash");
    } finally {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    }
  }, 120_000);
});

describe("payload files", () => {
  /** The real syncs, each call recorded (a directory by its path, a file as "file"). */
  function countingSyncs(): { syncs: PayloadSyncs; calls: string[] } {
    const calls: string[] = [];
    return {
      calls,
      syncs: {
        file: async (fh: FileHandle) => {
          await fsSyncs.file(fh);
          calls.push("file");
        },
        dir: async (d: string) => {
          await fsSyncs.dir(d);
          calls.push(d);
        },
      },
    };
  }

  it("fsync each append, a new file's directory, and the directories made for them, before an append counts as on disk", async () => {
    const { syncs, calls } = countingSyncs();
    const chunks = path.join(dir, "data", "chunks");
    const files = await PayloadFiles.open(chunks, { syncs });
    try {
      // The two directories made now: their entries are in dir and dir/data.
      expect(calls.sort()).toEqual([dir, path.join(dir, "data")].sort());
      calls.length = 0;
      const a = await files.append(7, [Buffer.alloc(20_000, 1), Buffer.alloc(30_000, 2)]);
      await a.synced;
      // One fsync for the whole append (group commit), and the new file's entry in its directory.
      expect(calls).toEqual([chunks, "file"]);
      const b = await files.append(7, [Buffer.alloc(20_000, 3)]);
      await b.synced;
      expect(calls).toEqual([chunks, "file", "file"]);
    } finally {
      await files.close();
    }
    // Opened again: nothing new to make, so no directory sync.
    calls.length = 0;
    const again = await PayloadFiles.open(chunks, { syncs });
    await again.close();
    expect(calls).toEqual([]);
  });
});
