// The sample connector as the package ships it (dist/): a newcomer's first `--help` and a mistyped option.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const CONNECTOR = path.join(process.cwd(), "dist", "runtime", "connectors", "sample-connector.js");

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [CONNECTOR, ...args], {
    timeout: 30_000,
    env: { ...process.env, EDGE_AGENT_IPC_PATH: "" },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe("sample-connector command line", () => {
  it("--help lists every option and exits 0", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    for (const option of [
      "--path",
      "--format",
      "--rate",
      "--size",
      "--count",
      "--name",
      "--type",
      "--stamp",
      "--report",
      "--write-log",
      "--reopen-every",
      "--exit-code",
      "--help",
    ])
      expect(r.stdout, option).toContain(option);
    expect(r.stderr).toBe("");
  });

  it("an unknown option is named with the usage and exit 2, not a stack trace", async () => {
    const r = await run(["--colour", "red"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--colour");
    expect(r.stderr).toContain("Usage: sample-connector");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("without a FIFO it says --path is required", async () => {
    const r = await run([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--path (or EDGE_AGENT_IPC_PATH) is required");
  });
});
