// docs/guide/device.md followed with the Debian package instead of the tarball: its `sh deb` block installs the
// package built by `npm run package:deb` on this machine (apt, as the guide says), then its `sh test` blocks from
// step 4 on run in order as root's shell would, against the installed /usr/bin/agentctl and the real system paths
// (/run/edge-agent, /var/run/intdash), the example values replaced by a real cloud's. What systemd would do, the
// test does: it starts /usr/bin/edge-agent as the user edge-agent with the installed unit's command line, its
// settings file and its folders. The tarball's blocks (npm install, its upgrade) are device-guide.test.ts's. The
// package is purged at the end. Needs root, dpkg and apt, as CI has them.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../e2e/stack.js";
import { lockPackages, unlockPackages } from "../deploy/dpkg-lock.js";
import { startCloudWithEdge, type CloudWithEdge } from "../deploy/unit-agent.js";
import { execStart, ROOT } from "../deploy/unit-file.js";
import { blockRunner, guideBlocks } from "./guide-blocks.js";
import { debPackages } from "../support/run-artefacts.js";

const run = promisify(execFile);
const { guide, blocks } = guideBlocks("device.md");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "device-guide-deb-"));
const connectors = path.join(dir, "opt", "device-connectors");
const SAMPLE = "/usr/lib/edge-agent/dist/runtime/connectors/sample-connector.js";
const UNIT = "/lib/systemd/system/edge-agent.service";
const AS_AGENT = ["--reuid=edge-agent", "--regid=edge-agent", "--init-groups"];
let cloud: CloudWithEdge;
let agent: { child: ChildProcess; exited: Promise<number | null>; log: () => string } | undefined;
const children: ChildProcess[] = [];
let deb = "";

// The deb block, then the test blocks but those of the tarball (its install and upgrade).
const testBlocks = [
  ...blocks.filter((b) => b.kind === "deb").map((b) => b.text),
  ...blocks.filter((b) => b.kind === "test" && !b.text.includes("npm install")).map((b) => b.text),
];
const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };

const { nextBlock, unused } = blockRunner({
  testBlocks,
  substitutions: () => [
    // apt without questions, from the folder the package was built into.
    ["sudo apt install ./edge-agent_<version>_<arch>.deb", `apt-get install -y -q ${deb}`],
    ["https://cloud.example.com", cloud.peer.url],
    ["0d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d", cloud.edge.projectUuid],
    ["5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", cloud.edge.edgeUuid],
    ["edge-client-secret", cloud.edge.edgeSecret],
    ["/opt/device-connectors", connectors],
  ],
  state: path.join(dir, "shell-state.sh"),
  cwd: dir,
  env: () => ({ ...process.env, PATH: `/usr/bin:${process.env.PATH}`, DEBIAN_FRONTEND: "noninteractive" }),
  timeoutMs: 240_000,
  onFailure: () => `agent:\n${agent?.log() ?? ""}`,
});

/** The settings file's variables (KEY=value lines), as systemd's EnvironmentFile reads them. */
function environmentFile(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const m = /^\s*([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!.replace(/^"(.*)"$/, "$1");
  }
  return env;
}

/** `systemctl start edge-agent`: its folders, then ExecStart as User=edge-agent with /etc/default/edge-agent. */
async function startAgent(): Promise<void> {
  const unit = fs.readFileSync(UNIT, "utf8");
  const { program, args } = execStart(unit);
  await run("install", ["-d", "-m", "0750", "-o", "edge-agent", "-g", "edge-agent", "/run/edge-agent", "/run/intdash"]);
  const env = Object.entries(environmentFile("/etc/default/edge-agent")).map(([k, v]) => `${k}=${v}`);
  // setpriv execs the agent itself (runuser would stay in between and end it with SIGKILL on SIGTERM).
  const child = spawn("setpriv", [...AS_AGENT, "env", `PATH=${process.env.PATH}`, ...env, program, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (c) => (log += String(c)));
  child.stderr!.on("data", (c) => (log += String(c)));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  agent = { child, exited, log: () => log };
  await until(
    async () =>
      (await run("/usr/bin/agentctl", ["--socket", "/run/edge-agent/agent.sock", "version"]).catch(() => undefined)) !==
      undefined,
    60_000,
    "the agent's socket",
  ).catch((e: Error) => {
    throw new Error(`${e.message}\n${log}`);
  });
}

async function stopAgent(): Promise<void> {
  agent!.child.kill("SIGTERM");
  expect(await agent!.exited).toBe(0);
  agent = undefined;
}

const pointsInCloud = async () => (await cloud.measurements()).reduce((n, m) => n + m.received_data_points, 0);

beforeAll(async () => {
  // `npm run package:deb -- --fast`, made once for the run (tests/support/run-artefacts.ts).
  deb = (await debPackages())["edge-agent"];
  await lockPackages();
  cloud = await startCloudWithEdge(path.join(dir, "cloud"));
  fs.mkdirSync(connectors, { recursive: true });
  // The connector program's folder: root's, readable by the agent's user (as /opt is).
  for (let d = connectors; d !== path.dirname(dir); d = path.dirname(d)) fs.chmodSync(d, 0o755);
}, 600_000);

afterAll(async () => {
  for (const c of [...children, agent?.child]) if (c && c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await run("pkill", ["-KILL", "-u", "edge-agent"]).catch(() => undefined);
  await run("dpkg", ["--purge", "edge-agent"]).catch(() => undefined);
  await cloud?.peer.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  unlockPackages();
}, 120_000);

describe.sequential("docs/guide/device.md with the Debian package", () => {
  it("installs the package with apt as the guide says", async () => {
    expect(blocks.filter((b) => b.kind === "deb")).toHaveLength(1);
    const out = await nextBlock();
    expect(out).toContain("Setting up edge-agent");
    expect(out.endsWith(`\n${version}\n${version}\n`), out).toBe(true);
    expect(fs.readFileSync(UNIT, "utf8")).toMatch(/^ExecStart=\/usr\/bin\/edge-agent /m);
    expect(fs.existsSync(SAMPLE)).toBe(true);
    expect(guide).toContain(SAMPLE);
  }, 300_000);

  it("step 4: connects the packaged agent, started as the unit starts it, to the cloud", async () => {
    await startAgent();
    expect(await nextBlock()).toMatch(/verified\s+true/);
  }, 120_000);

  it("step 5: logger-msg points written into logger_1.tx by a connector of the group edge-agent reach the cloud", async () => {
    expect(await nextBlock()).toContain("logger-1-up");
    expect(fs.statSync("/var/run/intdash/logger_1.tx").isFIFO()).toBe(true);
    // intdash's connector, here the package's sample connector, run by the agent's user.
    const c = spawn(
      "setpriv",
      [...AS_AGENT, process.execPath, SAMPLE, "--path", "/var/run/intdash/logger_1.tx"].concat([
        "--format",
        "logger-msg",
        "--type",
        "string",
        "--name",
        "sample/counter",
        "--count",
        "50",
        "--rate",
        "500",
      ]),
      { stdio: "ignore" },
    );
    children.push(c);
    await until(async () => (await pointsInCloud()) === 50, 30_000, "50 points in the cloud");
  }, 120_000);

  it("step 5: a connector program the agent starts, allowed in /etc/default/edge-agent", async () => {
    const root = blocks.find((b) => b.kind === "root" && b.text.includes("AGENT_ALLOW_DIRS"))!.text;
    const echo = root.split("\n").find((l) => l.startsWith("echo 'AGENT_ALLOW_DIRS="))!;
    await run("bash", ["-c", echo.replaceAll("/opt/device-connectors", connectors).replace("sudo ", "")]);
    await stopAgent(); // systemctl restart edge-agent
    await startAgent();
    fs.writeFileSync(
      path.join(connectors, "can-logger"),
      `#!/bin/sh\nexec "${process.execPath}" ${SAMPLE} --format logger-msg --type string --rate 200 --path "$1"\n`,
      { mode: 0o755 },
    );
    expect(await nextBlock()).toContain("can");
    await until(async () => (await pointsInCloud()) > 250, 30_000, "the launched connector's points in the cloud");
  }, 120_000);

  it("upgrade: apt install over the installed package keeps the settings, the data and /etc/default/edge-agent", async () => {
    await stopAgent();
    const edited = fs.readFileSync("/etc/default/edge-agent", "utf8");
    expect(edited).toContain(`AGENT_ALLOW_DIRS=${connectors}`);
    await run("apt-get", ["install", "-y", "-q", "--reinstall", deb], {
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      timeout: 240_000,
    });
    expect(fs.readFileSync("/etc/default/edge-agent", "utf8")).toBe(edited);
    await startAgent();
    const ctl = async (...args: string[]) =>
      (await run("/usr/bin/agentctl", ["--socket", "/run/edge-agent/agent.sock", ...args])).stdout;
    expect(await ctl("config", "connection")).toContain(cloud.edge.edgeUuid);
    const channels = await ctl("config", "device-connector", "upstream");
    for (const id of ["logger-1-up", "can"]) expect(channels).toContain(id);
  }, 300_000);

  it("step 7: exports the configuration with its secret and imports it back", async () => {
    await nextBlock();
    const file = path.join(dir, "edge-agent-config.yaml");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, "utf8")).toContain(cloud.edge.edgeSecret);
    await stopAgent();
    expect(testBlocks).toEqual([]);
    expect(unused()).toEqual([]);
  }, 120_000);
});
