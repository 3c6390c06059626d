// `cloud-peer <args>` as an operator runs it (the built bin, logs silent): its exit code and output.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);
const BIN = path.resolve("bin/cloud-peer.mjs");

export const runCloudPeer = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
  exec(process.execPath, [BIN, ...args], { env: { ...process.env, CLOUD_LOG_LEVEL: "silent" }, timeout: 60_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
