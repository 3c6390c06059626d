// The running connector's pid, kept so that the next agent can stop a connector that outlived an agent killed
// with SIGKILL (two connectors must never share one FIFO). Killing whatever a file names is a power, so a pid
// file is believed only where no one but the agent could have written it (a directory the agent's user owns
// and no one else may write, a file of that user no one else may write) and only for the process it
// describes: same start time (a pid is reused over time), same owner and same command line as the child the
// agent started (its command line as recorded, or, for a wrapper that exec'd its program, the FIFO marker
// the agent puts in every connector's environment). Anything else is ignored and reported.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

interface ProcInfo {
  startTime: string;
  uid: number;
  cmdline: string;
}

/** Start time (clock ticks since boot, /proc/<pid>/stat field 22), owner and command line of a process. */
function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
    const uid = fs.statSync(`/proc/${pid}`).uid;
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`).toString("base64");
    return { startTime, uid, cmdline };
  } catch {
    return undefined;
  }
}

const myUid = () => process.getuid?.() ?? -1;

/** Why a file (and its directory) could have been written by someone else, or undefined when only we could. */
function untrusted(file: string): string | undefined {
  const dir = path.dirname(file);
  const d = fs.statSync(dir);
  if (d.uid !== myUid() || (d.mode & 0o022) !== 0) return `its directory ${dir} is not the agent user's alone`;
  const f = fs.lstatSync(file);
  if (!f.isFile() || f.uid !== myUid() || (f.mode & 0o022) !== 0) return "the file is not the agent user's alone";
  return undefined;
}

/** Records a started child (call once it has spawned: its command line is then the program's). */
export function writePidFile(file: string, pid: number): void {
  const info = procInfo(pid);
  if (info === undefined) return;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${pid} ${info.startTime} ${info.uid} ${info.cmdline}\n`, { mode: 0o600 });
}

export type LeftoverResult = { killed: boolean; ignored?: string };

/** Whether the process's environment carries the marker the launcher gives the connector of `ipcPath`. */
function carriesMarker(pid: number, ipcPath: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`EDGE_AGENT_IPC_PATH=${ipcPath}`);
  } catch {
    return false;
  }
}

/** Kills the process group of a connector a previous agent left running, when the pid file is to be believed. */
export function killLeftover(file: string, ipcPath: string): LeftoverResult {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return { killed: false };
  }
  const why = untrusted(file);
  if (why !== undefined) return { killed: false, ignored: `pid file ${file} ignored: ${why}` };
  fs.rmSync(file, { force: true });
  const [pidText, startTime, uidText, cmdline] = text.trim().split(" ");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 1) return { killed: false, ignored: `pid file ${file} ignored: no valid pid` };
  const now = procInfo(pid);
  // Gone, or the pid now belongs to another process: the usual case after a reboot, nothing to report.
  if (now === undefined || now.startTime !== startTime) return { killed: false };
  if (String(now.uid) !== uidText || (now.cmdline !== cmdline && !carriesMarker(pid, ipcPath)))
    return {
      killed: false,
      ignored: `pid file ${file} ignored: process ${pid} is not the connector the agent started`,
    };
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      return { killed: false };
    }
  }
  return { killed: true };
}

/** The pid file of the connector on `ipcPath`, in the agent's own directory (one file per FIFO path). */
export function pidFileFor(pidDir: string, ipcPath: string): string {
  return path.join(pidDir, `${createHash("sha256").update(ipcPath).digest("hex").slice(0, 32)}.pid`);
}
