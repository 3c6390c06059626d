// Runs the benchmark runner (bench/run.ts) as `npm run bench` does, from a test: in a temp folder of the test
// file's own, whose results/ takes the results files, so a real run's bench/results/ is not overwritten.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

export const ROOT = path.resolve(import.meta.dirname, "../..");

export interface RunResult {
  code: number | null;
  out: string;
  err: string;
}

/** A temp folder for the calling test file, removed after its tests. */
export function benchTemp(prefix: string): string {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  return tmp;
}

/** `node --import tsx <args>` in the repository, with BENCH_RESULTS_DIR=<tmp>/results and `env`. */
export function runTsx(tmp: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: ROOT,
    env: { ...process.env, BENCH_RESULTS_DIR: path.join(tmp, "results"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (err += b.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, out, err })));
}

/** `npm run bench -- <name> <args...>`. */
export const runBench = (tmp: string, name: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
  runTsx(tmp, ["bench/run.ts", name, ...args], env);
