// `edge-agent backup --data DIR --to PATH`: copies the agent's settings and its data queue while it runs.
// LMDB's copy (mdb_env_copy, compacting) reads the environment inside one read transaction: each copy is
// that environment as of one instant, beside the running agent's writers. The result has the data
// directory's own layout (settings/, queue/), so restoring is copying it back while the agent is stopped.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { open } from "lmdb";
import { isEmptyDir, syncPath } from "../../lib/fs-checks.js";
import { QUEUE_LMDB } from "../queue/queue-env.js";
import { SETTINGS_LMDB } from "../settings/store.js";

export const backupUsage = (defaultData: string) =>
  "Usage: edge-agent backup [options]\n\n" +
  "Copies the agent's settings (connection, upstreams, channels, filters, ...) and its data queue (data not\n" +
  "yet delivered) into PATH, a new directory, while the agent runs. Restore: stop the agent, replace the\n" +
  "settings/ and queue/ folders of its data directory with those of PATH, start it.\n\n" +
  "Options:\n" +
  `  -d, --data <dir>  the agent's data directory (env AGENT_DATA) (default: "${defaultData}")\n` +
  "  --to <path>       where the backup goes (must not exist, or be an empty directory)\n" +
  "  -h, --help        display help for command\n";

/** The environments a backup copies: folder in the data directory and LMDB file in it. */
const ENVS = [
  { dir: "settings", file: SETTINGS_LMDB, required: true },
  { dir: "queue", file: QUEUE_LMDB, required: false },
];

/** Copies one environment, read-only (nothing is written to the agent's files), compacted, owner-only. */
async function copyEnv(from: string, to: string): Promise<void> {
  const env = open({ path: from, readOnly: true });
  try {
    await env.backup(to, true);
  } finally {
    await env.close();
  }
  fs.chmodSync(to, 0o600);
  await syncPath(to);
}

export async function backupAgent(dataDir: string, to: string): Promise<string> {
  const data = path.resolve(dataDir);
  const target = path.resolve(to);
  const settings = path.join(data, "settings", SETTINGS_LMDB);
  if (!fs.existsSync(settings)) throw new Error(`no agent settings at ${settings} (pass the agent's --data)`);
  if (!isEmptyDir(target)) throw new Error(`${target} exists and is not empty: give a new path for the backup`);
  // Built beside the target and renamed when complete: a PATH that exists is a whole backup.
  const stage = `${target}.partial-${process.pid}`;
  try {
    for (const e of ENVS) {
      const from = path.join(data, e.dir, e.file);
      if (!e.required && !fs.existsSync(from)) continue;
      fs.mkdirSync(path.join(stage, e.dir), { recursive: true, mode: 0o700 });
      fs.chmodSync(stage, 0o700);
      await copyEnv(from, path.join(stage, e.dir, e.file));
    }
    if (fs.existsSync(target)) fs.rmdirSync(target);
    fs.renameSync(stage, target);
    return target;
  } catch (e) {
    fs.rmSync(stage, { recursive: true, force: true });
    throw e;
  }
}

/** `defaultData`: the data directory when neither --data nor AGENT_DATA names one (the daemon's default). */
export async function backupMain(argv: string[], defaultData: string): Promise<number> {
  const usage = backupUsage(defaultData);
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { data: { type: "string", short: "d" }, to: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (e) {
    process.stderr.write(`edge-agent backup: ${(e as Error).message}\n${usage}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  if (!values.to) {
    process.stderr.write(`edge-agent backup: --to PATH is required\n${usage}`);
    return 2;
  }
  try {
    const target = await backupAgent(values.data ?? process.env.AGENT_DATA ?? defaultData, values.to);
    process.stdout.write(`backup written to ${target}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`edge-agent backup: ${(e as Error).message}\n`);
    return 1;
  }
}
