// `npm start`'s demo as a child process (dist/bin/demo.js) in a data directory of the test's, on a port of its
// choosing, started once its banner ends ("Ctrl-C stops everything.").
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { expect } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

export interface RunningDemo {
  child: ChildProcess;
  /** Everything the demo printed so far (stdout and stderr). */
  output: () => string;
}

export async function startDemo(dataDir: string, port: number): Promise<RunningDemo> {
  const child = spawn(process.execPath, ["dist/bin/demo.js"], {
    cwd: ROOT,
    env: { ...process.env, DEMO_DATA: dataDir, CLOUD_LISTEN: `127.0.0.1:${port}` },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  await expect.poll(() => out, { timeout: 90_000, interval: 200 }).toContain("Ctrl-C stops everything.");
  return { child, output: () => out };
}
