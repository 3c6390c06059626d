// A lock on a directory held for a process's life: a Unix socket listened on in the directory. The kernel drops it
// when the process dies (no stale lock after a crash or kill -9), and a second process that connects reads the
// holder's PID. The edge agent locks its data directory with it, the cloud peer its ingest journal.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

/** The longest path a Unix socket address holds (sun_path less its NUL); a longer one would be cut short. */
const SOCKET_PATH_MAX = 107;

/**
 * Runs `use` with an address for the socket file `file`: its path, or when the path is too long for a socket address,
 * the same file reached through a descriptor of its folder (Linux's /proc/self/fd, which the kernel follows), so the
 * lock is always in the directory whatever the length of its path.
 */
async function withAddress<T>(file: string, use: (address: string) => Promise<T>): Promise<T> {
  if (Buffer.byteLength(file) <= SOCKET_PATH_MAX) return use(file);
  const fd = fs.openSync(path.dirname(file), "r");
  try {
    return await use(`/proc/self/fd/${fd}/${path.basename(file)}`);
  } finally {
    fs.closeSync(fd);
  }
}

/** The PID the lock's holder answers with, or undefined when nothing listens there (a stale file). */
function holder(address: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = "";
    const c = net.connect(address);
    c.setEncoding("utf8");
    c.on("data", (d: string) => (text += d));
    c.once("end", () => resolve(Number.parseInt(text, 10) || 0));
    c.once("error", () => resolve(undefined));
  });
}

function listen(address: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((c) => c.end(`${process.pid}\n`));
    server.once("error", reject);
    server.listen(address, () => {
      server.off("error", reject);
      server.unref(); // the lock never keeps the process alive on its own
      resolve(server);
    });
  });
}

export interface HeldLock {
  release(): Promise<void>;
}

/** Takes the lock `file` (a socket path), or throws what `inUse` makes of the PID of the process holding it. */
export async function holdLock(file: string, inUse: (pid: number) => Error): Promise<HeldLock> {
  for (let attempt = 0; ; attempt++) {
    try {
      const server = await withAddress(file, listen);
      return { release: () => new Promise<void>((r) => server.close(() => r())) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt > 0) throw e;
    }
    const pid = await withAddress(file, holder);
    if (pid !== undefined) throw inUse(pid);
    fs.rmSync(file, { force: true }); // left by a process that died: nothing listens on it
  }
}
