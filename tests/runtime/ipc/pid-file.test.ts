import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { killLeftover, pidFileFor, writePidFile } from "../../../runtime/ipc/pid-file.js";
import { tempDir, waitFor } from "../../support/datapath.js";

let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await cleanup();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A process in its own group, as the launcher starts connectors; `marker` puts the agent's FIFO marker in its environment. */
async function sleeper(marker?: string): Promise<number> {
  const env = { ...process.env };
  delete env.EDGE_AGENT_IPC_PATH;
  if (marker !== undefined) env.EDGE_AGENT_IPC_PATH = marker;
  const c = spawn("sleep", ["30"], { detached: true, stdio: "ignore", env });
  children.push(c);
  await new Promise((r) => c.once("spawn", r));
  return c.pid!;
}

describe("connector pid files", () => {
  it("kills the connector a private pid file describes", async () => {
    const fifo = join(dir, "a.fifo");
    const pid = await sleeper(fifo);
    const file = pidFileFor(join(dir, "connectors"), fifo);
    writePidFile(file, pid);
    expect(killLeftover(file, fifo)).toEqual({ killed: true });
    await waitFor(() => !alive(pid), 30_000, "connector killed");
  });

  it("ignores a pid file in a directory others may write, and leaves the process alone", async () => {
    const fifo = join(dir, "b.fifo");
    const pid = await sleeper(fifo);
    const shared = join(dir, "shared");
    await mkdir(shared);
    await chmod(shared, 0o777);
    const file = join(shared, "b.fifo.pid");
    writePidFile(file, pid);
    const r = killLeftover(file, fifo);
    expect(r.killed).toBe(false);
    expect(r.ignored).toMatch(/is not the agent user's alone/);
    expect(alive(pid)).toBe(true);
  });

  it("ignores a pid file naming a process that is not the connector (command line and marker differ)", async () => {
    const fifo = join(dir, "c.fifo");
    const victim = await sleeper(); // same user, right start time, but not a connector of this FIFO
    const file = pidFileFor(join(dir, "connectors"), fifo);
    writePidFile(file, victim);
    const [pid, start, uid] = (await readFile(file, "utf8")).trim().split(" ");
    await writeFile(file, `${pid} ${start} ${uid} ${Buffer.from("my-connector\0").toString("base64")}\n`, {
      mode: 0o600,
    });
    const r = killLeftover(file, fifo);
    expect(r).toEqual({ killed: false, ignored: expect.stringMatching(/is not the connector the agent started/) });
    expect(alive(victim)).toBe(true);
  });

  it("leaves a reused pid alone (start time differs) and a missing file quietly", async () => {
    const file = join(dir, "stale.pid");
    await writeFile(file, `${process.pid} 1 0 x\n`, { mode: 0o600 });
    expect(killLeftover(file, join(dir, "x.fifo"))).toEqual({ killed: false });
    expect(killLeftover(join(dir, "missing.pid"), join(dir, "x.fifo"))).toEqual({ killed: false });
    expect(alive(process.pid)).toBe(true);
  });
});
