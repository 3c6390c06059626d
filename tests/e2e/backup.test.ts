// `cloud-peer backup` while an agent streams into the peer, then `cloud-peer restore` into a new data
// directory: the restored peer serves the same users, tokens, projects and edges, every point stored
// before the backup began, and no row that points past the end of its payload file.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";
import { cloudIndices, writeNumbered } from "./points.js";
import { openFifoWriter, startStack, streamThroughRt, until, type Stack } from "./stack.js";

const run = promisify(execFile);
const BIN = path.resolve("bin/cloud-peer.mjs");
const env = { ...process.env, CLOUD_LOG_LEVEL: "silent" };

let s: Stack;
let restored: TestPeer | undefined;
beforeAll(async () => {
  s = await startStack();
  await s.connect();
  await streamThroughRt(s);
}, 120_000);
afterAll(async () => {
  await restored?.close();
  await s?.close();
});

it("a backup taken during a live upstream restores every acknowledged point, with all payload bytes", async () => {
  const fh = await openFifoWriter(s.fifo("dc"));
  let written = 0;
  let writing = true;
  // Points of 1 KiB, a hundred per write: chunks beyond 16 KiB, whose payloads go to the payload files.
  const writer = (async () => {
    while (writing) {
      await writeNumbered(fh, written, written + 100, { size: 1024 });
      written += 100;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  let acked: number[];
  const backupDir = path.join(s.dir, "backup");
  try {
    await until(async () => (await cloudIndices(s)).length >= 1000, 30_000, "1000 points stored");
    // Stored and readable through the API: acknowledged to the agent.
    acked = await cloudIndices(s);
    const { stdout } = await run(process.execPath, [BIN, "backup", "--data", s.peer.dataDir, "--to", backupDir], {
      env,
      timeout: 60_000,
    });
    expect(stdout).toContain(`backup written to ${backupDir}`);
    // Data keeps flowing after the backup: the live peer ends up with more than the backup.
    const after = written;
    await until(() => written >= after + 500, 30_000, "more points written");
  } finally {
    writing = false;
    await writer;
    await fh.close();
  }
  const live = await until(
    async () => {
      const i = await cloudIndices(s);
      return i.length >= written && i;
    },
    30_000,
    "every point in the live peer",
  );

  const dataDir = path.join(s.dir, "restored");
  const r = await run(process.execPath, [BIN, "restore", "--from", backupDir, "--data", dataDir], {
    env,
    timeout: 60_000,
  });
  expect(r.stdout).toContain(`into ${dataDir}`);
  restored = await startTestPeer({ dataDir });

  // Every payload row finds its bytes in the restored files (large payloads were in files at all).
  const rows = await restored.svc.db.all<{ sequence_id: number; file_offset: number; file_length: number }>(
    "SELECT sequence_id, file_offset, file_length FROM meas_chunk_payloads WHERE file_length IS NOT NULL",
  );
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows)
    expect(fs.statSync(path.join(dataDir, "chunks", `${row.sequence_id}.chunks`)).size).toBeGreaterThanOrEqual(
      row.file_offset + row.file_length,
    );

  // The same token works on the restored peer and sees the same accounts and organisation.
  const get = async (p: string, peer: { url: string }) => {
    const res = await fetch(`${peer.url}/api${p}`, { headers: { "X-Intdash-Token": s.cloud.token } });
    expect(res.status, p).toBe(200);
    return res.json();
  };
  for (const p of [
    "/auth/users/me",
    "/auth/users",
    "/auth/edges",
    "/auth/projects",
    `/auth/projects/${s.cloud.projectUuid}/edges`,
  ])
    expect(await get(p, restored), p).toEqual(await get(p, s.peer));

  // All data read back through the REST API of the restored peer.
  const livePeer = s.peer;
  s.peer = restored;
  let got: number[];
  try {
    got = await cloudIndices(s);
  } finally {
    s.peer = livePeer;
  }
  expect(new Set(got).size).toBe(got.length);
  const have = new Set(got);
  expect(acked.filter((i) => !have.has(i))).toEqual([]);
  const inLive = new Set(live);
  expect(got.filter((i) => !inLive.has(i))).toEqual([]);
  expect(got.length).toBeLessThan(live.length);
}, 180_000);
