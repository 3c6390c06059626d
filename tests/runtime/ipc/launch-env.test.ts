// What a device connector started by the agent finds in its environment: the allowed variables of the agent's own
// environment (TZ, LANG, LC_*, CONNECTOR_*, what --allow-env names) and its launch.environment, never the rest of
// the agent's environment, where secrets live (an EnvironmentFile, the shell that started the agent).
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { ApiClient } from "../../../runtime/cli/client.js";
import { startAgent, type RunningAgent } from "../../../runtime/daemon.js";
import { eventually, tempDir } from "../../support/agent.js";

const AGENT_ENV = {
  AGENT_TEST_DB_PASSWORD: "s3cret-of-the-agent",
  CONNECTOR_SITE: "plant-7",
  CAN_BITRATE: "500000",
  TZ: "Asia/Tokyo",
};
let agent: RunningAgent | undefined;
let dir: string | undefined;

afterEach(async () => {
  for (const name of Object.keys(AGENT_ENV)) delete process.env[name];
  await agent?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("passes the allowed variables of the agent's environment to a connector, not a secret of the agent", async () => {
  dir = await tempDir("launch-env-");
  Object.assign(process.env, AGENT_ENV);
  const socketPath = path.join(dir, "agent.sock");
  agent = await startAgent({
    socketPath,
    dataDir: path.join(dir, "data"),
    allowDirs: [dir, "/bin", "/usr/bin"],
    allowEnv: ["CAN_*"],
  });
  const out = path.join(dir, "env.txt");
  const r = await new ApiClient(socketPath).post("/device-connectors/upstream", {
    id: "env",
    format: "iscp-v2-compat",
    dest_ids: ["deferred"],
    ipc: { type: "fifo", path: path.join(dir, "env.fifo") },
    // The connector writes what it was given, then waits to be stopped.
    launch: {
      command: "/bin/sh",
      args: ["-c", 'env > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 30', out],
      environment: { CONNECTOR_MODE: "test" },
    },
  });
  expect(r.status).toBe(201);
  const text = await eventually(() => readFile(out, "utf8").catch(() => undefined), 30_000);
  const env = new Map(text.split("\n").map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
  expect(env.get("AGENT_TEST_DB_PASSWORD")).toBeUndefined();
  expect(env.get("VITEST")).toBeUndefined(); // the rest of the agent's environment too
  expect([env.get("CONNECTOR_SITE"), env.get("CAN_BITRATE"), env.get("TZ")]).toEqual([
    "plant-7",
    "500000",
    "Asia/Tokyo",
  ]);
  expect(env.get("CONNECTOR_MODE")).toBe("test");
  expect(env.get("EDGE_AGENT_IPC_PATH")).toBe(path.join(dir, "env.fifo"));
  expect(env.get("PATH")).toBe(process.env.PATH);
});
