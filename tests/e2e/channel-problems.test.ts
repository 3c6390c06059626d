// What a user sees in an upstream IPC channel's state when things go wrong: corrupt bytes from the
// connector are skipped and counted (the good frames still arrive), and with limit_data_storage false
// a full disk stops the measurement and the channel says why, until there is room again.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, numberedFrame, range, writeNumbered } from "./points.js";
import { openFifoWriter, startConnectedStack, until, type Stack } from "./stack.js";

const run = promisify(execFile);
let s: Stack;
beforeAll(async () => void (s = await startConnectedStack()), 120_000);
afterAll(async () => s?.close());

const state = async () =>
  (await s.agentApi.get<{ code: string; error: string }>("/device-connectors/upstream/dc/state")).body;

it("skips corrupt bytes, counts them in the state, and keeps the good frames", async () => {
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    const garbage = Buffer.alloc(64, 0xff);
    await fh.write(Buffer.concat([numberedFrame(0), garbage, numberedFrame(1), numberedFrame(2)]));
    await writeNumbered(fh, 3, 50);
    await until(
      async () => (await state()).error.includes("corrupt frame region(s) skipped"),
      30_000,
      "the corrupt region counted",
    );
    expect(["connected", "quiet"]).toContain((await state()).code);
  } finally {
    await fh.close();
  }
  const got = await until(
    async () => {
      const i = await cloudIndices(s);
      return i.length >= 49 && i;
    },
    30_000,
    "the good frames in the cloud",
  );
  // The frame right after the garbage may be swallowed while resynchronising; every other one arrives.
  expect(got.filter((i) => i !== 1)).toEqual(range(0, 50).filter((i) => i !== 1));
}, 120_000);

it("stops the measurement when the disk is 90 % full (limit_data_storage false) and says so", async () => {
  await s.agentApi.patch("/deferred-upload", { limit_data_storage: false });
  const queue = s.agent!.dataPath.queue;
  const real = queue.diskUsage.bind(queue);
  let full = true;
  // The disk this test runs on is not full: report it as 95 % used, as statfs would on a full one.
  queue.diskUsage = async () => (full ? 0.95 : real());
  const before = (await s.measurements()).length;
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    await new Promise((r) => setTimeout(r, 1500)); // the agent checks the disk every second
    await writeNumbered(fh, 1000, 1100);
    await until(
      async () => {
        const st = await state();
        return (
          st.code === "error" &&
          st.error.includes("the disk holding the data directory is 95 % full: measurement stopped")
        );
      },
      30_000,
      "the channel in error with the reason",
    );
    expect((await cloudIndices(s)).filter((i) => i >= 1000)).toEqual([]);

    full = false;
    await new Promise((r) => setTimeout(r, 1500));
    await writeNumbered(fh, 2000, 2100);
    const got = await until(
      async () => {
        const i = (await cloudIndices(s)).filter((x) => x >= 2000);
        return i.length >= 100 && i;
      },
      30_000,
      "accepting again",
    );
    expect(got).toEqual(range(2000, 2100));
    await until(async () => ["connected", "quiet"].includes((await state()).code), 30_000, "the channel recovers");
  } finally {
    await fh.close();
    queue.diskUsage = real;
    await s.agentApi.patch("/deferred-upload", { limit_data_storage: true });
  }
  // Streaming after the stop is a new measurement.
  expect((await s.measurements()).length).toBeGreaterThan(before);
}, 120_000);

it("names both formats when the connector writes the other one, and says the sample connector's formats", async () => {
  const sample = path.resolve("runtime/connectors/sample-connector.ts");
  const connector = (format: string) => [
    "--import",
    "tsx",
    sample,
    "--path",
    "${ipc.path}",
    "--format",
    format,
    "--count",
    "200",
    "--rate",
    "0",
  ];
  // The channel reads iscp-v2-compat (what it was set to); the connector writes logger-msg.
  await s.put("/device-connectors/upstream", {
    id: "wrong",
    format: "iscp-v2-compat",
    dest_ids: ["rt"],
    ipc: { type: "fifo", path: s.fifo("wrong") },
    launch: { command: process.execPath, args: connector("logger-msg"), working_dir: process.cwd() },
  });
  const wrongState = async () =>
    (await s.agentApi.get<{ code: string; error: string }>("/device-connectors/upstream/wrong/state")).body;
  await until(async () => (await wrongState()).error.includes("no frame read"), 30_000, "the format error");
  expect((await wrongState()).error).toMatch(
    /\d+ corrupt frame region\(s\) skipped \(\d+ bytes\) and no frame read: the channel reads iscp-v2-compat; if the connector writes logger-msg, set the channel's format to logger-msg$/,
  );
  await s.agentApi.delete("/device-connectors/upstream/wrong");
  // The sample connector refuses a format it does not write, naming the two it does.
  const bad = await run(
    process.execPath,
    connector("csv").map((a) => (a === "${ipc.path}" ? s.fifo("x") : a)),
  ).catch((e: { code: number; stderr: string }) => e);
  expect(bad).toMatchObject({
    code: 2,
    stderr: 'sample-connector: --format takes "iscp-v2-compat" or "logger-msg", not "csv"\n',
  });
}, 120_000);
