// docs/guide/cloud.md, followed on the packed and installed package. Its `sh test` blocks run here in order, in
// bash, as one shell session would (each block starts from the variables the earlier ones exported), with the
// system paths moved into a temp dir (the table below; each entry must apply, so the guide and this test stay in
// step). Between them the test does what the `sh root` blocks (useradd, systemctl, install) would: it starts,
// stops, restarts and signals the installed cloud-peer with the unit's command line and the settings those blocks
// write. `npm ci` of the `sh build` block is not run: it would reinstall this checkout.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../e2e/stack.js";
import { packedTarball } from "../support/run-artefacts.js";
import { blockRunner, guideBlocks } from "./guide-blocks.js";
import { execStart, ROOT, unitText } from "../deploy/unit-file.js";
import { makeTestCa, type TestCa } from "../support/test-ca.js";

const run = promisify(execFile);
const { guide, blocks, testBlocks } = guideBlocks("cloud.md");

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-guide-"));
const download = path.join(dir, "download");
const prefix = path.join(dir, "usr-local");
const pkg = path.join(prefix, "lib", "node_modules", "measure-edge-cloud");
const paths: Array<[string, string]> = [
  ["/var/lib/cloud-peer", path.join(dir, "var", "lib", "cloud-peer")],
  ["/var/backups", path.join(dir, "var", "backups")],
  ["/etc/cloud-peer", path.join(dir, "etc", "cloud-peer")],
];
const mapped = (p: string) => paths.reduce((acc, [from, to]) => acc.replaceAll(from, to), p);
const state = path.join(dir, "shell-state.sh");
const SQLITE_RELEASE = path.join("node_modules", "sqlite3", "build", "Release");
const SQLITE_BINARY = path.join(ROOT, SQLITE_RELEASE, "node_sqlite3.node");
let port = 0;
let ca: TestCa;
let peer: { child: ChildProcess; exited: Promise<number | null>; url: string } | undefined;
/** What `echo 'CLOUD_X=...' | sudo tee -a /etc/default/cloud-peer` lines of the root blocks run so far wrote. */
const settings: Record<string, string> = {};

function substitutions(): Array<[string, string]> {
  return [
    ["sudo -u cloud-peer ", ""],
    ["sudo ", ""],
    // sqlite3's install script fetches or builds its binary (minutes, or the network): the test skips the
    // scripts and puts this checkout's binary of the same version where that script would.
    [
      "--omit=dev ./measure-edge-cloud-*.tgz",
      `--omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund ./measure-edge-cloud-*.tgz && install -D ${SQLITE_BINARY} ${path.join(pkg, SQLITE_RELEASE, "node_sqlite3.node")}`,
    ],
    ["/usr/local", prefix],
    // (/etc/cloud-peer appears only in root blocks: the test writes what they install there itself.)
    ...paths.filter(([from]) => from !== "/etc/cloud-peer"),
    ["http://127.0.0.1:8080", `http://127.0.0.1:${port}`],
    ["cloud.example.com:8080", `localhost:${port}`],
  ];
}
/** Runs the guide's next `sh test` block (`set -euo pipefail`, the variables the earlier blocks exported). */
const { nextBlock, unused } = blockRunner({
  testBlocks,
  substitutions,
  state,
  cwd: download,
  env: () => ({
    ...process.env,
    PATH: `${path.join(prefix, "bin")}:${process.env.PATH}`,
    CURL_CA_BUNDLE: ca.caFile,
    npm_config_update_notifier: "false",
  }),
});

/** Runs `command` in the guide's shell session (its exported variables), trusting the test CA. */
async function inSession(command: string): Promise<string> {
  return (
    await run("bash", ["-c", `source ${state}; ${command}`], { env: { ...process.env, CURL_CA_BUNDLE: ca.caFile } })
  ).stdout;
}

/** A variable the guide's blocks exported. */
const shellVar = (name: string) => inSession(`printf %s "$${name}"`);

/** The settings the next root block writes with `echo 'X=Y' | sudo tee -a /etc/default/cloud-peer`. */
function applyRootSettings(text: string): void {
  for (const [, name, value] of text.matchAll(/^echo '(CLOUD_\w+)=(.*)' \| sudo tee -a \/etc\/default\/cloud-peer$/gm))
    settings[name!] = mapped(value!).replace("cloud.example.com:8080", `localhost:${port}`);
}

/** `systemctl start cloud-peer`: the installed command with the unit's arguments and the settings file's variables. */
async function startPeer(): Promise<void> {
  const args = execStart(unitText("cloud-peer")).args.map(mapped);
  const child = spawn(process.execPath, [path.join(prefix, "bin", "cloud-peer"), ...args], {
    env: { ...process.env, CLOUD_LISTEN: `127.0.0.1:${port}`, CLOUD_LOG_LEVEL: "warn", ...settings },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (c) => {
      out += String(c);
      const m = /listening on (https?:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on("data", (c) => (out += String(c)));
    void exited.then((code) => reject(new Error(`cloud-peer exited (${code}): ${out}`)));
  });
  peer = { child, exited, url };
}

async function stopPeer(): Promise<void> {
  peer!.child.kill("SIGTERM");
  expect(await peer!.exited).toBe(0);
  peer = undefined;
}

/** The root blocks up to the next test block, in order (their settings applied). */
function rootBlocksBefore(n: number): string[] {
  const idx = blocks.filter((b) => b.kind === "test").length - testBlocks.length;
  let seen = 0;
  const out: string[] = [];
  for (const b of blocks) {
    if (b.kind === "test") seen++;
    else if (b.kind === "root" && seen === idx) out.push(b.text);
    if (seen > idx) break;
  }
  expect(out.length, `root blocks before test block ${idx + 1}`).toBe(n);
  out.forEach(applyRootSettings);
  return out;
}

function serialOfNewConnection(): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: "127.0.0.1", port, servername: "localhost", ca: ca.ca }, () => {
      resolve(s.getPeerCertificate().serialNumber);
      s.end();
    });
    s.on("error", reject);
  });
}

beforeAll(async () => {
  fs.mkdirSync(download);
  ca = makeTestCa(dir);
  port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  // `npm pack` (the guide's build block), made once for the run (tests/support/run-artefacts.ts).
  const { file } = await packedTarball();
  fs.copyFileSync(file, path.join(download, path.basename(file)));
}, 120_000);

afterAll(async () => {
  if (peer && peer.child.exitCode === null) peer.child.kill("SIGKILL");
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.sequential("docs/guide/cloud.md", () => {
  it("marks every sh block: test (run here), root (needs root and systemd), build (npm ci, npm pack), postgres (a PostgreSQL server)", () => {
    expect(blocks.length).toBe(guide.match(/^```sh/gm)!.length);
    expect(
      blocks.every((b) => ["test", "root", "build", "postgres"].includes(b.kind)),
      JSON.stringify(blocks.map((b) => b.kind)),
    ).toBe(true);
    // The PostgreSQL block's commands are the scale-out walkthrough's, which tests/docs/scale-out-guide.test.ts runs.
    for (const b of blocks.filter((x) => x.kind === "postgres"))
      for (const line of b.text.trim().split("\n"))
        expect(line, line).toMatch(
          /^(sudo -u postgres createuser cloud$|sudo -u postgres createdb -O cloud cloud$|cloud-peer migrate-store |cloud-peer --data )/,
        );
    const scaleOut = guideBlocks("scale-out.md").guide;
    for (const b of blocks.filter((x) => x.kind === "postgres"))
      for (const line of b.text.split("\n").filter((l) => l.startsWith("sudo -u postgres ")))
        expect(scaleOut, line).toContain(`${line}\n`);
    expect(blocks.filter((b) => b.kind === "build").map((b) => b.text)).toEqual(["npm ci\nnpm pack\n"]);
    for (const b of blocks.filter((x) => x.kind === "root"))
      for (const line of b.text.trim().split("\n"))
        expect(line, line).toMatch(/^(sudo |echo .* \| sudo tee -a \/etc\/default\/cloud-peer$)/);
    expect(testBlocks.length).toBe(17);
  });

  it("installs cloud-peer from the packed tarball", async () => {
    const out = await nextBlock();
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(out.endsWith(`\n${version}\n`) || out === `${version}\n`, out).toBe(true);
    for (const b of blocks.filter((x) => x.kind === "root"))
      for (const [file] of b.text.matchAll(/\/usr\/local\/lib\/node_modules\/measure-edge-cloud\/\S+/g))
        expect(fs.existsSync(file.replace("/usr/local", prefix)), file).toBe(true);
  }, 400_000);

  it("first start: the admin changes the temporary password from the file, then gets an access token and an API token", async () => {
    rootBlocksBefore(1);
    await startPeer();
    const passwordFile = path.join(mapped("/var/lib/cloud-peer"), "initial-admin-password");
    expect(fs.existsSync(passwordFile)).toBe(true);
    expect(await nextBlock()).toContain('"status":"ready"');
    expect(fs.existsSync(passwordFile)).toBe(false); // gone with the temporary password
    expect(await nextBlock()).toBe("admin\nadmin\n");
    // The tokens of admin: the one just made, listed without its secret.
    const tokens = await nextBlock();
    expect(tokens).toMatch(/^id {2}name {2}created_at {2}expired_at {2}last_used_at\n\d+ {2}setup {2}\S+ {2}never {2}/);
    expect(tokens).not.toContain(await shellVar("API_TOKEN"));
  }, 180_000);

  it("creates a user, an edge, a group with a project holding both, and the edge signs in", async () => {
    expect(await nextBlock()).toMatch(/^\S{8,}\n$/); // alice's temporary password
    await nextBlock();
    const out = await nextBlock();
    const [projectUuid, edgeUuid, token] = await Promise.all(["PROJECT_UUID", "EDGE_UUID", "API_TOKEN"].map(shellVar));
    expect(out).toBe(`project ${projectUuid}, edge ${edgeUuid}\n`);
    const get = async (p: string) =>
      (await fetch(`${peer!.url}/api${p}`, { headers: { "X-Intdash-Token": token! } })).json() as Promise<any>;
    expect(
      (await get(`/auth/projects/${projectUuid}/edges`)).items.map((e: { edge_uuid: string }) => e.edge_uuid),
    ).toEqual([edgeUuid]);
    expect(
      (await get(`/auth/projects/${projectUuid}/members`)).items.map((m: { user_uuid: string }) => m.user_uuid),
    ).toContain(await shellVar("ALICE_UUID"));
    expect(await nextBlock()).toBe("bearer\n");
  }, 180_000);

  it("serves TLS with the certificate files, and a reload gives new connections the renewed certificate", async () => {
    const files = { cert: mapped("/etc/cloud-peer/tls-cert.pem"), key: mapped("/etc/cloud-peer/tls-key.pem") };
    fs.mkdirSync(path.dirname(files.cert), { recursive: true });
    const install = (c: { cert: string; key: string }) => {
      fs.copyFileSync(c.cert, files.cert);
      fs.copyFileSync(c.key, files.key);
    };
    install(ca.issue("first", "1001"));
    await stopPeer();
    rootBlocksBefore(1);
    expect(Object.keys(settings).sort()).toEqual(["CLOUD_PUBLIC_URL", "CLOUD_TLS_CERT", "CLOUD_TLS_KEY"]);
    await startPeer();
    expect(peer!.url).toBe(`https://127.0.0.1:${port}`);
    const first = await nextBlock();
    expect(first).toContain('"status":"ready"');
    expect(first).toContain("serial=1001");

    rootBlocksBefore(1);
    install(ca.issue("second", "1002"));
    peer!.child.kill("SIGHUP"); // systemctl reload (the unit's ExecReload)
    await until(async () => (await serialOfNewConnection()) === "1002", 30_000, "the renewed certificate");
    expect(await nextBlock()).toBe("serial=1002\n");
  }, 180_000);

  it("backs up while running, restores into the stopped peer's directory, resets the admin's password", async () => {
    rootBlocksBefore(1);
    await nextBlock();
    expect(fs.existsSync(path.join(mapped("/var/backups/cloud-peer/2024-06-01"), "backup.json"))).toBe(true);
    rootBlocksBefore(1);
    await stopPeer();
    await nextBlock();
    rootBlocksBefore(1);
    await startPeer();
    // The restored peer knows the API token made before the backup, and the edge.
    expect(
      JSON.parse(await inSession('curl -fsS $CLOUD/api/auth/edges/$EDGE_UUID -H "X-Intdash-Token: $API_TOKEN"')).name,
    ).toBe("vehicle-1");
    expect(await nextBlock()).toMatch(/^\S{8,}\n$/);
  }, 180_000);

  it("rotates the signing key", async () => {
    const out = await nextBlock();
    expect(out).toMatch(/^new signing key \S+; previous keys stay published for \d+ s\n/);
    const listed = out.trim().split("\n").slice(1);
    expect(listed).toHaveLength(2);
    expect(listed.filter((l) => l.endsWith(" current"))).toHaveLength(1);
    expect(listed.filter((l) => / retires \S+$/.test(l))).toHaveLength(1);
  }, 180_000);

  it("upgrades: backup, reinstall, restart; the peer serves the same data", async () => {
    await nextBlock();
    expect(fs.existsSync(path.join(mapped("/var/backups/cloud-peer/before-upgrade"), "backup.json"))).toBe(true);
    // The same version reinstalled: nothing to migrate (the block would fail on exit code 3 or 4).
    expect((await nextBlock()).trim().split("\n").at(-1)).toMatch(/^the store is current \(\d+ migrations applied\)$/);
    rootBlocksBefore(1);
    await stopPeer();
    await startPeer();
    const out = await nextBlock();
    expect(out).toContain('"status":"ready"');
    expect(out).toContain('"version"');
    await stopPeer();
  }, 400_000);

  it("ran every test block, with every substitution", () => {
    expect(testBlocks).toEqual([]);
    expect(unused()).toEqual([]);
  });
});
