// Device-connector IPC channels with the real driver: real FIFOs, real connector processes launched
// and stopped by settings changes, and states that follow them.
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgent, type TestAgent } from "../../support/agent.js";

const SAMPLE = path.resolve("runtime/connectors/sample-connector.ts");
let t: TestAgent;
beforeAll(async () => {
  t = await startTestAgent();
  await t.api.post("/upstreams", { id: "u" });
});
afterAll(async () => {
  await t.close();
});

const state = async (p: string) => (await t.api.get<{ code: string; error: string; enabled: boolean }>(p)).body;
const sample = (...args: string[]) => ({
  command: process.execPath,
  args: ["--import", "tsx", SAMPLE, "--path", "${ipc.path}", ...args],
  working_dir: process.cwd(),
});

describe("IPC channels with real FIFOs and connectors", () => {
  it("creates the FIFO, launches the connector, and reports its data", async () => {
    const r = await t.api.post<{ ipc: { path: string } }>("/device-connectors/upstream", {
      id: "sampler",
      format: "iscp-v2-compat",
      dest_ids: ["u"],
      launch: sample("--rate", "200", "--size", "64"),
    });
    expect(r.status).toBe(201);
    await expect.poll(async () => (await stat(r.body.ipc.path)).isFIFO(), { timeout: 30_000 }).toBe(true);
    await expect
      .poll(() => state("/device-connectors/upstream/sampler/state"), { timeout: 30_000 })
      .toMatchObject({ code: "connected", error: "" });
  });

  it("stops the connector when the channel is disabled and shows none", async () => {
    await t.api.patch("/device-connectors/upstream/sampler", { enabled: false });
    await expect
      .poll(() => state("/device-connectors/upstream/sampler/state"), { timeout: 30_000 })
      .toMatchObject({ code: "none" });
    // Nothing writes any more: re-enabling without a launch leaves the channel waiting for a connector.
    await t.api.patch("/device-connectors/upstream/sampler", { enabled: true, launch: null });
    await expect
      .poll(() => state("/device-connectors/upstream/sampler/state"), { timeout: 30_000 })
      .toMatchObject({ code: "disconnected" });
  });

  it("shows error with the exit reason when the restart policy gives up", async () => {
    await t.api.post("/device-connectors/upstream", {
      id: "quitter",
      format: "iscp-v2-compat",
      dest_ids: ["u"],
      launch: { ...sample("--count", "3", "--exit-code", "3", "--rate", "0"), restart: { policy: "never" } },
    });
    await expect
      .poll(() => state("/device-connectors/upstream/quitter/state"), { timeout: 30_000 })
      .toMatchObject({
        code: "error",
        error: 'connector exited with code 3; not restarted (restart policy "never")',
      });
  });

  it("a downstream channel is quiet once a connector reads its FIFO", async () => {
    await t.api.post("/device-connectors/downstream", {
      id: "reader",
      format: "iscp-v2-compat",
      launch: { command: "/bin/cat", args: ["${ipc.path}"] },
    });
    await expect
      .poll(() => state("/device-connectors/downstream/reader/state"), { timeout: 30_000 })
      .toMatchObject({ code: "quiet" });
    await t.api.delete("/device-connectors/downstream/reader");
    expect((await t.api.get("/device-connectors/downstream/reader/state")).status).toBe(404);
  });
});
