// The `sh` blocks of a guide under docs/guide/, each with its kind (```sh test, ```sh root, ...), in order.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { ROOT } from "../deploy/unit-file.js";

const run = promisify(execFile);

export function guideBlocks(file: string) {
  const guide = fs.readFileSync(path.join(ROOT, "docs/guide", file), "utf8");
  const blocks = [...guide.matchAll(/^```sh( \w+)?\n([\s\S]*?)^```$/gm)].map((m) => ({
    kind: m[1]?.trim() ?? "",
    text: m[2]!,
  }));
  return { guide, blocks, testBlocks: blocks.filter((b) => b.kind === "test").map((b) => b.text) };
}

export interface BlockRunnerOptions {
  /** The guide's `sh test` blocks still to run (taken from the front). */
  testBlocks: string[];
  /** Example values of the guide and what the test puts in their place; each must be used at least once. */
  substitutions: () => Array<[string, string]>;
  /** The shell session's exported variables, carried from block to block. */
  state: string;
  cwd: string;
  env: () => NodeJS.ProcessEnv;
  /** A bound on one block (a loop waiting for a server that never comes fails instead of hanging). */
  timeoutMs?: number;
  /** More to say when a block fails (e.g. the logs of what it started). */
  onFailure?: () => string;
}

/** Runs a guide's `sh test` blocks one by one in one shell session (`set -euo pipefail`). */
export function blockRunner(o: BlockRunnerOptions) {
  const used = new Set<string>();
  async function nextBlock(): Promise<string> {
    let text = o.testBlocks.shift()!;
    for (const [from, to] of o.substitutions())
      if (text.includes(from)) {
        used.add(from);
        text = text.replaceAll(from, to);
      }
    const script = `${fs.existsSync(o.state) ? `source ${o.state}\n` : ""}set -euo pipefail\n${text}\nexport -p > ${o.state}\n`;
    const limits = o.timeoutMs ? { timeout: o.timeoutMs, killSignal: "SIGKILL" as const } : {};
    const r = await run("bash", ["-c", script], { cwd: o.cwd, env: o.env(), maxBuffer: 16 << 20, ...limits }).catch(
      (e: { code: number; stdout: string; stderr: string }) => {
        throw new Error(
          `block failed (${e.code}):\n${text}\nstdout:\n${e.stdout}\nstderr:\n${e.stderr}${o.onFailure ? `\n${o.onFailure()}` : ""}`,
        );
      },
    );
    return r.stdout;
  }
  /** The example values no block used (a guide changed under the test). */
  const unused = () =>
    o
      .substitutions()
      .map(([from]) => from)
      .filter((f) => !used.has(f));
  return { nextBlock, unused };
}
