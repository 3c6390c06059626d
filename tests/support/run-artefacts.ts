// What several test files build from this checkout, made once per run: the npm tarball (`npm pack`) and the
// Debian packages (`npm run package:deb -- --fast`). The global setup (artefacts-global-setup.ts) makes an empty
// directory for the run and removes it at teardown. The first file that asks for an artefact makes it there while
// holding a lock (a directory with its pid; one whose owner is gone is taken over); the others wait for it. Files only
// read what is there: one that changes a file works on a copy. A failed make leaves nothing behind, so the next
// file that asks tries again.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { processAlive } from "./process-alive.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/** Set by the global setup: the run's artefact directory. */
export const ARTEFACTS_ENV = "TEST_RUN_ARTEFACTS_DIR";

/** The directory holding artefact `name`, made by `make(dir)` unless this run made it already. */
async function onceForRun(name: string, make: (dir: string) => Promise<void>, ms = 900_000): Promise<string> {
  const root = process.env[ARTEFACTS_ENV];
  if (!root)
    throw new Error(`${name}: needs the global setup tests/support/artefacts-global-setup.ts (${ARTEFACTS_ENV})`);
  const dir = path.join(root, name);
  const done = path.join(root, `${name}.done`);
  const lock = path.join(root, `${name}.lock`);
  const end = Date.now() + ms;
  for (;;) {
    if (fs.existsSync(done)) return dir;
    let owner = true;
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, "pid"), String(process.pid));
    } catch {
      owner = false;
      const pid = Number(fs.readFileSync(path.join(lock, "pid"), { encoding: "utf8", flag: "a+" }) || "0");
      if (pid && !processAlive(pid)) fs.rmSync(lock, { recursive: true, force: true });
    }
    if (owner) {
      try {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(dir);
        await make(dir);
        fs.writeFileSync(done, "");
        return dir;
      } catch (e) {
        fs.rmSync(dir, { recursive: true, force: true });
        throw e;
      } finally {
        fs.rmSync(lock, { recursive: true, force: true });
      }
    }
    if (Date.now() > end) throw new Error(`${name}: not made within ${ms / 1000} s (${lock})`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

export interface PackedTarball {
  /** The tarball's path (read only: copy it to change or move it). */
  file: string;
  /** What `npm pack --json` says of it. */
  size: number;
  files: string[];
}

/** This checkout packed by `npm pack --ignore-scripts` (dist/ is fresh: the build's global setup made it). */
export async function packedTarball(): Promise<PackedTarball> {
  const dir = await onceForRun("npm-pack", async (out) => {
    const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", out], {
      cwd: ROOT,
      maxBuffer: 16 << 20,
      env: { ...process.env, npm_config_update_notifier: "false" },
    });
    fs.writeFileSync(path.join(out, "pack.json"), stdout);
  });
  const [packed] = JSON.parse(fs.readFileSync(path.join(dir, "pack.json"), "utf8")) as [
    { filename: string; size: number; files: { path: string }[] },
  ];
  return { file: path.join(dir, packed.filename), size: packed.size, files: packed.files.map((f) => f.path) };
}

export type DebPackage = "edge-agent" | "cloud-peer";

/** This machine's Debian packages (`scripts/package-deb.mjs --fast`): each package's .deb (read only). */
export async function debPackages(): Promise<Record<DebPackage, string>> {
  const dir = await onceForRun("deb", async (out) => {
    await run(process.execPath, [path.join(ROOT, "scripts", "package-deb.mjs"), "--out", out, "--fast"], {
      cwd: ROOT,
      timeout: 600_000,
      maxBuffer: 16 << 20,
    });
  });
  const files = fs.readdirSync(dir);
  const find = (p: DebPackage) => path.join(dir, files.find((f) => f.startsWith(`${p}_`) && f.endsWith(".deb"))!);
  return { "edge-agent": find("edge-agent"), "cloud-peer": find("cloud-peer") };
}
