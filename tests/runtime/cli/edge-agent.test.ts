// The three commands' version and help as a user sees them: -V/--version prints the package's version,
// and edge-agent's help lists every option (with --log-level and --version) and its environment in the
// same commander style as agentctl's and cloud-peer's.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const run = (bin: string, args: string[]) =>
  promisify(execFile)(process.execPath, [path.join(ROOT, "bin", bin), ...args], { cwd: ROOT, timeout: 60_000 });

it("prints the package version with --version and -V", async () => {
  const [agent, agentShort, ctl, cloud] = await Promise.all([
    run("edge-agent.mjs", ["--version"]),
    run("edge-agent.mjs", ["-V"]),
    run("agentctl.mjs", ["-V"]),
    run("cloud-peer.mjs", ["--version"]),
  ]);
  for (const r of [agent, agentShort, ctl, cloud]) expect(r.stdout).toBe(`${VERSION}\n`);
}, 120_000);

it("shows edge-agent's help in the style of the other commands", async () => {
  const { stdout } = await run("edge-agent.mjs", ["--help"]);
  expect(stdout).toMatch(/^Usage: edge-agent \[options\] \[command\]\n/);
  for (const option of [
    "-V, --version",
    "-s, --socket <path>",
    "-d, --data <dir>",
    "-c, --config <file>",
    "--log-level <level>",
    "--log-format <format>",
    "--quic-ca <file>",
    "--metrics-listen <host:port>",
    "-h, --help",
  ])
    expect(stdout).toContain(`  ${option}`);
  expect(stdout).toMatch(/^ {2}bench\s+measure this device/m);
  expect(stdout).toContain(
    "Every command and option:\n  edge-agent [--socket <path>] [--data <dir>] [--config <file>] [--log-level <level>] [--log-format json|text] [--quic-ca <file>] [--allow-dir <dir>]... [--allow-env <name>]... [--metrics-listen <host:port>]\n",
  );
  expect(stdout).toMatch(/^Environment \(flags win over the environment\):\n {2}AGENT_SOCKET /m);
  for (const name of [
    "AGENT_DATA",
    "AGENT_CONFIG",
    "AGENT_LOG_LEVEL",
    "AGENT_LOG_FORMAT",
    "AGENT_QUIC_CA",
    "AGENT_ALLOW_DIRS",
    "AGENT_ALLOW_ENV",
    "AGENT_METRICS_LISTEN",
  ])
    expect(stdout).toMatch(new RegExp(`^  ${name} `, "m"));
}, 120_000);

it("refuses an unknown log level from the environment with exit code 2", async () => {
  const r = await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, "bin/edge-agent.mjs"), "--socket", path.join(ROOT, "nope.sock")],
    {
      env: { ...process.env, AGENT_LOG_LEVEL: "loud" },
      timeout: 60_000,
    },
  ).then(
    () => ({ code: 0, stderr: "" }),
    (e: { code: number; stderr: string }) => e,
  );
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(
    `edge-agent: AGENT_LOG_LEVEL "loud" is not one of fatal, error, warn, info, debug, trace, silent\nusage: edge-agent [options] (edge-agent --help)\n`,
  );
}, 120_000);
