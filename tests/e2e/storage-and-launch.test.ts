// The queue's capacity with the cloud away (oldest data deleted first), and a launched connector that
// keeps crashing (restarted with backoff, its points reach the cloud run after run).
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { addRtUpstream, openFifoWriter, startConnectedStack, until, type Stack } from "./stack.js";

let s: Stack;
beforeAll(async () => void (s = await startConnectedStack({}, addRtUpstream)), 120_000);
afterAll(async () => s?.close());

const agentPending = async () =>
  (await s.agentApi.get<{ items: { pending_data_size: number }[] }>("/measurements")).body.items.reduce(
    (n, m) => n + m.pending_data_size,
    0,
  );

it("deletes the oldest data first when the queue is full, and uploads the rest later", async () => {
  await s.put("/device-connectors/upstream", {
    id: "big",
    format: "iscp-v2-compat",
    dest_ids: ["rt"],
    ipc: { type: "fifo", path: s.fifo("big") },
  });
  await s.agentApi.patch("/deferred-upload", { data_storage_capacity: 1, limit_data_storage: true });
  await s.stopCloud();
  const fh = await openFifoWriter(s.fifo("big"));
  try {
    // 400 points of 8 KiB: about 3.2 MiB into a 1 MiB queue.
    for (let i = 0; i < 400; i += 20) await writeNumbered(fh, i, i + 20, { name: "big", size: 8192 });
  } finally {
    await fh.close();
  }
  // Eviction follows the commits: on a busy machine the queue is over capacity for a moment after each append.
  const pending = await until(
    async () => {
      const n = await agentPending();
      return n > 0 && n <= 1024 * 1024 + 64 * 1024 && n;
    },
    30_000,
    "data queued within the capacity",
  );
  expect(pending).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);

  await s.startCloud();
  const got = await until(
    async () => {
      const i = await cloudIndices(s, "big");
      return i.length > 0 && (await agentPending()) === 0 && i;
    },
    60_000,
    "the kept data uploaded",
  );
  // What survived is the newest, without gaps: the oldest went first.
  const first = got[0]!;
  expect(first).toBeGreaterThan(0);
  expect(got).toEqual(range(first, 400));
  expect(got.length * 8192).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
  await s.agentApi.patch("/deferred-upload", { data_storage_capacity: 102400 });
  await s.agentApi.delete("/device-connectors/upstream/big");
}, 120_000);

it("restarts a crashing launched connector with backoff; every run's points reach the cloud", async () => {
  const sample = path.resolve("runtime/connectors/sample-connector.ts");
  await s.put("/device-connectors/upstream", {
    id: "crashy",
    format: "iscp-v2-compat",
    dest_ids: ["rt"],
    data_name_prefix: "crashy/",
    ipc: { type: "fifo", path: s.fifo("crashy") },
    launch: {
      command: process.execPath,
      args: [
        "--import",
        "tsx",
        sample,
        "--path",
        "${ipc.path}",
        "--count",
        "25",
        "--rate",
        "0",
        "--exit-code",
        "7",
        "--name",
        "n",
      ],
      working_dir: process.cwd(),
      restart: { policy: "on-failure", initial_backoff_ms: 50, max_backoff_ms: 200, max_restarts: 3 },
    },
  });
  // Four runs (the first and three restarts), then the policy gives up and says why.
  await until(
    async () =>
      (await s.agentApi.get<{ code: string; error: string }>("/device-connectors/upstream/crashy/state")).body.code ===
      "error",
    60_000,
    "the restart policy gives up",
  );
  const state = (await s.agentApi.get<{ error: string }>("/device-connectors/upstream/crashy/state")).body;
  expect(state.error).toBe('connector exited with code 7; not restarted (restart policy "on-failure")');
  const counts = await until(
    async () => {
      const byName = new Map<string, number>();
      for (const m of await s.measurements())
        for (const p of await s.points(m.uuid)) byName.set(p.name, (byName.get(p.name) ?? 0) + 1);
      return (byName.get("crashy/n") ?? 0) >= 100 && byName;
    },
    30_000,
    "100 points from four runs",
  );
  expect(counts.get("crashy/n")).toBe(100);
}, 120_000);
