// `agentctl --help` as a newcomer reads it: every command with its options, and the fields a device connector
// takes, without the agent running and without docs/agent-api.md at hand; edge-agent's help in one style.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { agentctl } from "../../support/agent.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");

describe("agentctl --help", () => {
  it("lists every command with its options, and a device connector's fields", async () => {
    const r = await agentctl("/nonexistent/agent.sock", ["--help"]);
    expect(r.code).toBe(0);
    for (const line of [
      "agentctl config connection  show or modify the connection settings",
      "agentctl config device-connector <direction>",
      "agentctl config filter <direction>",
      "agentctl state [kind...]",
      "agentctl measurement  list measurements",
      "agentctl config-file apply <file>",
      "-c, --create <yaml>",
      "-d, --delete <uuid>",
      "--enabled <bool>",
    ])
      expect(r.stdout, line).toContain(line);
    for (const field of [
      "  id: string\n",
      "  format: iscp-v2-compat|logger-msg\n",
      "  ipc: object (optional)\n",
      "  ipc.path: string\n",
      "  launch.restart.policy: always|on-failure|never (optional)\n",
      "  launch.environment: {NAME: string} (optional)\n",
      "  dest_ids: string[]\n",
    ])
      expect(r.stdout, field).toContain(field);
  });
});

describe("edge-agent help", () => {
  const help = (args: string[]) =>
    promisify(execFile)(process.execPath, [path.join(ROOT, "bin/edge-agent.mjs"), ...args], { timeout: 30_000 }).then(
      (r) => r.stdout,
    );

  it("shows the --socket and --data defaults by their options", async () => {
    const text = await help(["--help"]);
    expect(text).toMatch(
      /--socket <path> +command API socket \(env AGENT_SOCKET\) \(default:\s+"\.\/data\/agent\/agent\.sock"\)/,
    );
    expect(text).toMatch(
      /--data <dir> +settings and data directory \(env AGENT_DATA\)\s+\(default: "\.\/data\/agent"\)/,
    );
  });

  for (const sub of ["backup", "bench"])
    it(`edge-agent ${sub} --help is in the same style as the rest`, async () => {
      const text = await help([sub, "--help"]);
      expect(text.startsWith(`Usage: edge-agent ${sub} [options]\n\n`), text).toBe(true);
      expect(text).toContain("\nOptions:\n");
      expect(text).toContain("  -d, --data <dir>");
      expect(text).toContain("  -h, --help ");
    });
});
