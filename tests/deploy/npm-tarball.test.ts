// The npm tarball (`npm pack`): what it holds (the compiled code, the commands, the units and the docs; no source
// maps, no guide pictures), and that it installs with `npm install -g` on a machine without build tools: sqlite3
// (optional, the cloud's) fails to build and is left out, the agent runs, and the cloud peer says what is missing.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { ROOT } from "./unit-file.js";
import { packedTarball } from "../support/run-artefacts.js";

const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "npm-tarball-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  bin: Record<string, string>;
};

it("holds the commands, the compiled code they load, the units and the docs; no source maps or pictures", async () => {
  // `npm pack --json` of this checkout, made once for the run (tests/support/run-artefacts.ts).
  const packed = await packedTarball();
  const files = packed.files;
  expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
  expect(files.filter((f) => /\.(png|jpe?g|gif|webp)$/.test(f) || f.startsWith("docs/guide/images/"))).toEqual([]);
  expect(files.filter((f) => /\.ts$/.test(f) || f.startsWith("tests/") || f.startsWith("bench/"))).toEqual([]);
  for (const [name, bin] of Object.entries(manifest.bin)) {
    expect(files, name).toContain(bin);
    // Each launcher loads one compiled entry: loadCompiled("<name>", "<entry under dist/>").
    const entry = /loadCompiled\("[^"]+", "([^"]+)"\)/.exec(fs.readFileSync(path.join(ROOT, bin), "utf8"))![1]!;
    expect(files, `${name}: dist/${entry}`).toContain(`dist/${entry}`);
  }
  for (const f of [
    "bin/compiled.mjs",
    "deploy/edge-agent.service",
    "deploy/edge-agent.env",
    "deploy/cloud-peer.service",
    "deploy/cloud-peer.env",
    "docs/guide/device.md",
    "docs/platforms.md",
    "dist/runtime/connectors/sample-connector.js",
    "README.md",
  ])
    expect(files, f).toContain(f);
  // Packed: the compiled tree, the agent's bundle (which copies its pure-JavaScript libraries) and the docs.
  expect(packed.size).toBeLessThan(1.5 * 1024 * 1024);
}, 120_000);

it("installs with npm install -g where no compiler or python is on PATH: the agent runs, the cloud says sqlite3 is missing", async () => {
  const tgz = `${manifest.name}-${manifest.version}.tgz`;
  fs.copyFileSync((await packedTarball()).file, path.join(dir, tgz));
  // A PATH with node, npm and sh only: no cc, make or python3 for node-gyp.
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  for (const [name, target] of [
    ["node", process.execPath],
    ["npm", path.join(path.dirname(process.execPath), "npm")],
    ["sh", "/bin/sh"],
  ] as const)
    fs.symlinkSync(target, path.join(bin, name));
  const env = { HOME: os.homedir(), PATH: bin, npm_config_update_notifier: "false" };
  const prefix = path.join(dir, "prefix");
  // The guide's line (docs/guide/device.md, step 2) without --ignore-scripts: the install scripts run and sqlite3's
  // build fails. (Offline from npm's cache where it can: the registry is only asked for what is not there.)
  await run(
    "npm",
    ["install", "-g", "--prefix", prefix, "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", `./${tgz}`],
    { cwd: dir, env, maxBuffer: 16 << 20, timeout: 300_000 },
  );
  const installed = path.join(prefix, "lib", "node_modules", manifest.name);
  expect(fs.existsSync(path.join(installed, "node_modules", "lmdb"))).toBe(true);
  expect(fs.existsSync(path.join(installed, "node_modules", "sqlite3"))).toBe(false);
  const agent = await run(path.join(prefix, "bin", "edge-agent"), ["--version"], { env });
  expect(agent.stdout).toBe(`${manifest.version}\n`);
  const cloud = await run(
    path.join(prefix, "bin", "cloud-peer"),
    ["--listen", "127.0.0.1:0", "--data", path.join(dir, "cloud")],
    { env },
  ).catch((e: { code: number; stderr: string }) => e);
  expect(cloud).toMatchObject({ code: 2 });
  expect((cloud as { stderr: string }).stderr).toContain("the sqlite3 module is not installed for linux-");
}, 400_000);
