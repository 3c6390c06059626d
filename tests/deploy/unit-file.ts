// The systemd units in deploy/ as the tests read them: directives, the command line, and a copy whose
// ExecStart program is this checkout's (systemd-analyze verify needs the program to exist).
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

export const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

export type UnitName = "edge-agent" | "cloud-peer";

export const unitText = (name: UnitName) => fs.readFileSync(path.join(ROOT, "deploy", `${name}.service`), "utf8");

/** Every value of `key` in the unit (comments and continuation lines are not used in ours). */
export function directives(text: string, key: string): string[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1).trim());
}

export function directive(text: string, key: string): string {
  const all = directives(text, key);
  if (all.length !== 1) throw new Error(`expected one ${key}= in the unit, found ${all.length}`);
  return all[0]!;
}

/** ExecStart split into the program and its arguments (ours quote nothing). */
export function execStart(text: string): { program: string; args: string[] } {
  const [program, ...args] = directive(text, "ExecStart").split(/\s+/);
  return { program: program!, args };
}

/** The value after `flag` in the unit's ExecStart. */
export function flagValue(text: string, flag: string): string {
  const { args } = execStart(text);
  const i = args.indexOf(flag);
  if (i < 0 || i + 1 >= args.length) throw new Error(`ExecStart has no ${flag} <value>`);
  return args[i + 1]!;
}

/** TimeoutStopSec in milliseconds (ours is a plain number of seconds). */
export function timeoutStopMs(text: string): number {
  const v = directive(text, "TimeoutStopSec");
  if (!/^\d+$/.test(v)) throw new Error(`TimeoutStopSec=${v} is not a number of seconds`);
  return Number(v) * 1000;
}

/**
 * `systemd-analyze verify` of `text` saved as `<dir>/<name>.service` with ExecStart's program replaced by this
 * checkout's bin (the installed path does not exist here): the lines it printed about the unit. verify exits 0
 * on unknown keys and bad values (it only warns), so its words are the verdict, not only its exit code.
 */
export async function verifyUnit(dir: string, name: UnitName, text: string): Promise<string[]> {
  const { program } = execStart(text);
  const file = path.join(dir, `${name}.service`);
  fs.writeFileSync(
    file,
    text.replaceAll(`ExecStart=${program} `, `ExecStart=${path.join(ROOT, "bin", `${name}.mjs`)} `),
  );
  const r = await run("systemd-analyze", ["verify", "--man=no", file]).then(
    (ok) => ({ code: 0, out: ok.stdout + ok.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
  const lines = r.out.split("\n").filter((l) => l.includes(`${name}.service`));
  return r.code === 0 ? lines : [`systemd-analyze verify exited with ${r.code}`, ...lines];
}
