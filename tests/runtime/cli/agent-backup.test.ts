// `edge-agent backup` beside a running agent (both real processes): the copy, put back as a data
// directory, starts an agent with the same settings and the same undelivered data in its queue.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { open } from "lmdb";
import { afterAll, expect, it } from "vitest";
import { ApiClient } from "../../../runtime/cli/client.js";
import { writeNumbered } from "../../e2e/points.js";
import { openFifoWriter } from "../../e2e/stack.js";
import { eventually, TEST_ALLOW_DIRS, tempDir } from "../../support/agent.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const BIN = path.join(ROOT, "bin/edge-agent.mjs");
const run = (args: string[]) =>
  promisify(execFile)(process.execPath, [BIN, ...args], { cwd: ROOT, timeout: 60_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

const children: ChildProcess[] = [];
let dir: string;
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function startAgent(
  dataDir: string,
  socket: string,
): Promise<{ child: ChildProcess; api: ApiClient; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      "--socket",
      socket,
      "--data",
      dataDir,
      "--log-level",
      "warn",
      ...TEST_ALLOW_DIRS.flatMap((d) => ["--allow-dir", d]),
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  children.push(child);
  const api = new ApiClient(socket);
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`edge-agent exited with ${child.exitCode}`);
    return (await api.get("/version").catch(() => undefined))?.status === 200;
  }, 30_000);
  const stop = async () => {
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await gone;
  };
  return { child, api, stop };
}

/** Every key and value of every named database of a queue environment, read without writing. */
async function dumpQueue(file: string): Promise<Record<string, Array<[unknown, string]>>> {
  const env = open({ path: file, readOnly: true, maxDbs: 8 });
  try {
    const out: Record<string, Array<[unknown, string]>> = {};
    for (const name of ["meas", "seqs", "chunks", "index"]) {
      const db = env.openDB({ name, encoding: "binary" });
      out[name] = [...db.getRange()].map(({ key, value }) => [key, Buffer.from(value as Buffer).toString("hex")]);
    }
    return out;
  } finally {
    // Awaited: a later open of the same path must not get this environment's (older) snapshot.
    await env.close();
  }
}

it("backs up a running agent; the copy reopens with the same settings and queue", async () => {
  dir = await tempDir("agent-backup-");
  const data = path.join(dir, "data");
  const agent = await startAgent(data, path.join(dir, "a.sock"));
  const fifo = path.join(dir, "dc.fifo");
  // No cloud is configured: everything written stays in the queue, waiting for delivery.
  for (const [p, body] of [
    ["/upstreams", { id: "rt", persist: true, qos: "partial" }],
    [
      "/device-connectors/upstream",
      {
        id: "dc",
        format: "iscp-v2-compat",
        dest_ids: ["rt"],
        data_name_prefix: "dev/",
        ipc: { type: "fifo", path: fifo },
      },
    ],
    [
      "/filters/upstream",
      {
        id: "thin",
        type: "sampling",
        target: { type: "name", patterns: ["dev/x/#"] },
        change_to: { type: "sampling", interval_ms: 100 },
      },
    ],
  ] as const) {
    const r = await agent.api.request("POST", p, body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  const fh = await openFifoWriter(fifo);
  await writeNumbered(fh, 0, 2000, { size: 64 });
  await fh.close();
  const queued = async () =>
    (await agent.api.get<{ items: { pending_data_size: number }[] }>("/measurements")).body.items;
  await eventually(async () => (await queued()).reduce((a, m) => a + m.pending_data_size, 0) >= 2000 * 64, 30_000);
  // The measurement ends with its channel; its streams' ends wait for the (absent) cloud for at most 5 s.
  // Once that is written, nothing changes the queue any more: wait until it has stood still for 6 s.
  await agent.api.request("PATCH", "/device-connectors/upstream/dc", { enabled: false });
  let last = "";
  let since = Date.now();
  await eventually(async () => {
    await new Promise((r) => setTimeout(r, 500));
    const now = JSON.stringify(await dumpQueue(path.join(data, "queue", "queue.mdb")));
    if (now !== last) [last, since] = [now, Date.now()];
    return Date.now() - since >= 6_000;
  }, 40_000);

  const backup = path.join(dir, "backup");
  const made = await run(["backup", "--data", data, "--to", backup]);
  expect(made.code, made.stderr).toBe(0);
  expect(made.stdout).toBe(`backup written to ${backup}\n`);
  expect(fs.statSync(path.join(backup, "queue", "queue.mdb")).mode & 0o777).toBe(0o600);
  const again = await run(["backup", "--data", data, "--to", backup]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain("exists and is not empty");

  const settingsOf = async (api: ApiClient) =>
    Promise.all(
      ["/upstreams", "/device-connectors/upstream", "/filters/upstream", "/connection", "/transport"].map(
        async (p) => (await api.get(p)).body,
      ),
    );
  const before = { settings: await settingsOf(agent.api), measurements: (await agent.api.get("/measurements")).body };
  const liveQueue = await dumpQueue(path.join(data, "queue", "queue.mdb"));
  expect(liveQueue.chunks!.length).toBeGreaterThan(0);
  expect((before.measurements as { items: unknown[] }).items.length).toBeGreaterThan(0);
  await agent.stop();

  // Restore as the docs say: the agent stopped, the backup's settings/ and queue/ copied into a data directory.
  const restored = path.join(dir, "restored");
  fs.cpSync(backup, restored, { recursive: true });
  expect(await dumpQueue(path.join(restored, "queue", "queue.mdb"))).toEqual(liveQueue);
  const again2 = await startAgent(restored, path.join(dir, "b.sock"));
  try {
    expect(await settingsOf(again2.api)).toEqual(before.settings);
    expect((await again2.api.get("/measurements")).body).toEqual(before.measurements);
  } finally {
    await again2.stop();
  }
}, 120_000);
