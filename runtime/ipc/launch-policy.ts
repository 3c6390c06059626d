// Who may make the agent run a program. Whoever can use the command API socket can create a device
// connector, and a connector's `launch` runs a program as the agent's user (often root) and its FIFO is
// created wherever `ipc.path` says. So the programs and FIFO folders are the device administrator's
// choice, given on the agent's command line (root-owned, like the service unit), not the socket user's:
// a `launch.command` and an `ipc.path` must lie in an allowed directory, and `launch.environment` may set only
// the variables of an allow-list (launch-env.ts) and those the administrator allows by name.
import fs from "node:fs";
import path from "node:path";
import { LAUNCH_ENV_RULE, launchVariableAllowed } from "./launch-env.js";

/** Where intdash's published device connectors keep their FIFOs (allowed by default). */
export const INTDASH_FIFO_DIRS: readonly string[] = ["/var/run/intdash", "/var/run/intdash2"];

export interface LaunchPolicy {
  /** Directories that launch commands and FIFO paths may come from (absolute). */
  readonly dirs: readonly string[];
  /** Variables `launch.environment` may set beyond the allow-list (exact names, or prefixes ending in `*`). */
  readonly allowEnv: readonly string[];
}

/** The default: the agent's own data and IPC directories, the intdash FIFO folders, and what the administrator adds. */
export function launchPolicy(
  own: { dataDir: string; ipcDir: string },
  extraDirs: readonly string[] = [],
  allowEnv: readonly string[] = [],
): LaunchPolicy {
  const dirs = [own.dataDir, own.ipcDir, ...INTDASH_FIFO_DIRS, ...extraDirs].map((d) => path.resolve(d));
  return { dirs: [...new Set(dirs)], allowEnv: [...allowEnv] };
}

/** The real path of `p`, or of its deepest existing ancestor joined with the rest (the FIFO may not exist yet). */
function realish(p: string): string {
  const rest: string[] = [];
  let cur = path.resolve(p);
  for (;;) {
    try {
      return path.join(fs.realpathSync(cur), ...rest.reverse());
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return path.resolve(p);
      rest.push(path.basename(cur));
      cur = parent;
    }
  }
}

function inside(dir: string, p: string): boolean {
  const rel = path.relative(realish(dir), p);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/** A command as the launcher will run it: a path is taken from the working directory, a bare name from PATH. */
export function resolveCommand(
  command: string,
  workingDir: string | undefined,
  envPath = process.env.PATH ?? "",
): string | undefined {
  if (command.includes("/")) return realish(path.resolve(workingDir ?? process.cwd(), command));
  for (const dir of envPath.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return realish(candidate);
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

interface Guarded {
  ipc: { path: string };
  launch?:
    | { command: string; working_dir?: string | undefined; environment?: Record<string, string> | undefined }
    | undefined;
}

/** The rule `item` breaks, as a sentence naming the field, or undefined when the policy allows it. */
export function launchRefusal(policy: LaunchPolicy, item: Guarded): string | undefined {
  const allowed = `allowed directories: ${policy.dirs.join(", ")}; the agent's administrator adds more with --allow-dir`;
  const fifo = realish(item.ipc.path);
  if (!policy.dirs.some((d) => inside(d, fifo)))
    return `ipc.path: "${item.ipc.path}" is outside the directories FIFOs may be created in (${allowed})`;
  const launch = item.launch;
  if (launch === undefined) return undefined;
  const command = resolveCommand(launch.command, launch.working_dir);
  if (command === undefined) return `launch.command: "${launch.command}" is not found on the agent's PATH (${allowed})`;
  if (!policy.dirs.some((d) => inside(d, command)))
    return `launch.command: "${launch.command}" (${command}) is outside the directories programs may be launched from (${allowed})`;
  for (const name of Object.keys(launch.environment ?? {})) {
    if (!launchVariableAllowed(name, policy.allowEnv))
      return `launch.environment.${name}: ${LAUNCH_ENV_RULE} (--allow-env ${name})`;
  }
  return undefined;
}
