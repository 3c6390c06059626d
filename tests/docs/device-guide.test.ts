// docs/guide/device.md, followed on a real agent and cloud. Its `sh test` blocks run here in order, in bash, with
// the system paths moved into a temp dir (the table below; each entry must apply, so the guide and this test
// stay in step), after the package was packed and as the installed commands. Between them the test does what
// the `sh root` blocks (useradd, systemctl; they need root and systemd) would: it starts the installed agent
// with the unit's command line. Those blocks are shown only; the units are checked by systemd-analyze verify in
// tests/deploy/units.test.ts. `npm ci` of the `sh build` block is not run: it would reinstall this checkout.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../e2e/stack.js";
import { packedTarball } from "../support/run-artefacts.js";
import { guideBlocks } from "./guide-blocks.js";
import { ROOT } from "../deploy/unit-file.js";
import {
  mapPaths,
  startCloudWithEdge,
  startUnitAgent,
  systemPaths,
  type CloudWithEdge,
  type UnitAgent,
} from "../deploy/unit-agent.js";

const run = promisify(execFile);
const { guide, blocks, testBlocks } = guideBlocks("device.md");

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "device-guide-"));
const download = path.join(dir, "download");
const prefix = path.join(dir, "usr-local");
const pkg = path.join(prefix, "lib", "node_modules", "measure-edge-cloud");
const connectors = path.join(dir, "opt", "device-connectors");
const intdash = mapPaths("/run/intdash", systemPaths(dir));
let cloud: CloudWithEdge;
let agent: UnitAgent | undefined;
let connector: ChildProcess | undefined;

/** What the guide says -> what the test runs. */
function substitutions(): Array<[string, string]> {
  return [
    ["sudo ", ""],
    // sqlite3's install script would build it from source (minutes); the agent does not load it.
    ["--omit=dev", "--omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund"],
    ["/usr/local", prefix],
    ["/var/run/intdash", intdash],
    ...systemPaths(dir).filter(([from]) => from === "/run/edge-agent"),
    ["/opt/device-connectors", connectors],
    ["https://cloud.example.com", cloud.peer.url],
    ["0d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d", cloud.edge.projectUuid],
    ["5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", cloud.edge.edgeUuid],
    ["edge-client-secret", cloud.edge.edgeSecret],
  ];
}
const used = new Set<string>();
const exports: string[] = [];

/** Runs the guide's next `sh test` block as a user's shell would (`set -e`, the exports of earlier blocks). */
async function nextBlock(): Promise<string> {
  let text = testBlocks.shift()!;
  for (const [from, to] of substitutions())
    if (text.includes(from)) {
      used.add(from);
      text = text.replaceAll(from, to);
    }
  const script = `set -euo pipefail\n${exports.join("\n")}\n${text}`;
  exports.push(...text.split("\n").filter((l) => l.startsWith("export ")));
  const env = {
    ...process.env,
    PATH: `${path.join(prefix, "bin")}:${process.env.PATH}`,
    npm_config_update_notifier: "false",
  };
  const r = await run("bash", ["-c", script], { cwd: download, env, maxBuffer: 16 << 20 }).catch(
    (e: { code: number; stdout: string; stderr: string }) => {
      throw new Error(`block failed (${e.code}):\n${text}\nstdout:\n${e.stdout}\nstderr:\n${e.stderr}`);
    },
  );
  return r.stdout;
}

/** The agent as `systemctl start edge-agent` starts it, with AGENT_ALLOW_DIRS from the guide's settings file. */
async function startAgent(): Promise<UnitAgent> {
  const allow = /^echo 'AGENT_ALLOW_DIRS=(\S+)' \| sudo tee -a \/etc\/default\/edge-agent$/m.exec(guide)![1]!;
  return startUnitAgent(dir, {
    program: path.join(prefix, "bin", "edge-agent"),
    env: { AGENT_ALLOW_DIRS: mapPaths(allow, substitutions()) },
  });
}

async function stopAgent(): Promise<void> {
  agent!.child.kill("SIGTERM");
  expect(await agent!.exited).toBe(0);
}

const pointsInCloud = async () => (await cloud.measurements()).reduce((n, m) => n + m.received_data_points, 0);
const sampleConnector = (args: string[]) => [
  path.join(pkg, "dist", "runtime", "connectors", "sample-connector.js"),
  "--format",
  "logger-msg",
  "--type",
  "string",
  ...args,
];

beforeAll(async () => {
  fs.mkdirSync(download);
  // `npm pack` (the guide's build block), made once for the run (tests/support/run-artefacts.ts).
  const { file } = await packedTarball();
  fs.copyFileSync(file, path.join(download, path.basename(file)));
  cloud = await startCloudWithEdge(path.join(dir, "cloud"));
}, 120_000);

afterAll(async () => {
  connector?.kill("SIGKILL");
  if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill("SIGKILL");
  await cloud?.peer.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.sequential("docs/guide/device.md", () => {
  it("marks every sh block: test (run here), root (needs root and systemd), build (npm ci, npm pack), deb (device-guide-deb.test.ts)", () => {
    expect(blocks.length).toBe(guide.match(/^```sh/gm)!.length);
    expect(
      blocks.every((b) => ["test", "root", "build", "deb"].includes(b.kind)),
      JSON.stringify(blocks.map((b) => b.kind)),
    ).toBe(true);
    expect(blocks.filter((b) => b.kind === "build").map((b) => b.text)).toEqual(["npm ci\nnpm pack\n"]);
    for (const b of blocks.filter((x) => x.kind === "root"))
      for (const line of b.text.trim().split("\n"))
        expect(line, line).toMatch(/^(sudo |systemctl status |journalctl |echo .* \| sudo tee )/);
    expect(testBlocks.length).toBe(6);
  });

  it("installs the commands from the packed tarball", async () => {
    const out = await nextBlock();
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(out.endsWith(`\n${version}\n${version}\n`), out).toBe(true);
    // What the root blocks copy from the installed package is there.
    for (const b of blocks.filter((x) => x.kind === "root"))
      for (const [file] of b.text.matchAll(/\/usr\/local\/lib\/node_modules\/measure-edge-cloud\/\S+/g))
        expect(fs.existsSync(mapPaths(file, [["/usr/local", prefix]])), file).toBe(true);
  }, 300_000);

  it("connects the agent, started as the unit starts it, to the cloud", async () => {
    fs.mkdirSync(connectors, { recursive: true });
    agent = await startAgent();
    const out = await nextBlock();
    expect(out).toMatch(/verified\s+true/);
    await until(
      async () => (await agent!.api.get<{ code: string }>("/upstreams/default/state")).body.code !== "disconnected",
      30_000,
      "the upstream connected",
    );
  }, 120_000);

  it("takes logger-msg data from intdash's connector FIFO logger_1.tx to the cloud", async () => {
    const out = await nextBlock();
    expect(out).toContain("logger-1-up");
    const tx = path.join(intdash, "logger_1.tx");
    expect(fs.statSync(tx).isFIFO()).toBe(true);
    expect(fs.statSync(path.join(intdash, "logger_1.rx")).isFIFO()).toBe(true);
    // intdash's connector, here the sample connector writing the same format into the same FIFO.
    connector = spawn(process.execPath, sampleConnector(["--path", tx, "--count", "50", "--rate", "500"]), {
      stdio: "ignore",
    });
    await until(async () => (await pointsInCloud()) === 50, 30_000, "50 points in the cloud");
  }, 120_000);

  it("starts a connector program from an allowed directory, whose points reach the cloud", async () => {
    fs.writeFileSync(
      path.join(connectors, "can-logger"),
      `#!/bin/sh\nexec "${process.execPath}" ${sampleConnector(["--rate", "200", "--path"])
        .map((a) => `"${a}"`)
        .join(" ")} "$1"\n`,
      { mode: 0o755 },
    );
    const out = await nextBlock();
    expect(out).toContain("can");
    await until(async () => (await pointsInCloud()) > 250, 30_000, "the launched connector's points in the cloud");
  }, 120_000);

  it("upgrades in place: reinstalled and restarted, the agent keeps its settings, and the cloud shows the measurement ended", async () => {
    await nextBlock();
    await stopAgent();
    expect((await cloud.measurements()).every((m) => m.ended)).toBe(true);
    agent = await startAgent();
    expect((await agent.api.get("/connection")).body).toMatchObject({
      server_url: cloud.peer.url,
      client_secret: cloud.edge.edgeSecret,
    });
    expect(
      (await agent.api.get<{ items: { id: string }[] }>("/device-connectors/upstream")).body.items.map((i) => i.id),
    ).toEqual(["logger-1-up", "can"]);
  }, 300_000);

  it("exports the configuration with its secret to a private file and imports it back", async () => {
    await nextBlock();
    const file = path.join(download, "edge-agent-config.yaml");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, "utf8")).toContain(cloud.edge.edgeSecret);
    await stopAgent();
  }, 120_000);

  it("ran every test block, with every substitution", () => {
    expect(testBlocks).toEqual([]);
    expect(
      substitutions()
        .map(([from]) => from)
        .filter((f) => !used.has(f)),
    ).toEqual([]);
  });
});
