// One agent per data directory. The lock is a Unix socket in the directory, listened on for the process's life:
// the kernel drops it when the process dies (no stale lock after a crash or kill -9), and a second agent that
// connects reads the holder's PID. Two agents on one directory would share the queue and the measurements, and
// the second would end the first's running measurement in the cloud while its points kept arriving.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { SocketInUseError } from "./api/unix-socket.js";

const LOCK_FILE = "agent.lock";

class DataDirInUseError extends SocketInUseError {}

/** The PID the lock's holder answers with, or undefined when nothing listens there (a stale file). */
function holder(file: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = "";
    const c = net.connect(file);
    c.setEncoding("utf8");
    c.on("data", (d: string) => (text += d));
    c.once("end", () => resolve(Number.parseInt(text, 10) || 0));
    c.once("error", () => resolve(undefined));
  });
}

function listen(file: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((c) => c.end(`${process.pid}\n`));
    server.once("error", reject);
    server.listen(file, () => {
      server.off("error", reject);
      server.unref(); // the lock never keeps the process alive on its own
      resolve(server);
    });
  });
}

/** Takes the data directory's lock, or throws DataDirInUseError naming the agent that holds it. */
export async function lockDataDir(dataDir: string): Promise<{ release(): Promise<void> }> {
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      const server = await listen(file);
      return { release: () => new Promise<void>((r) => server.close(() => r())) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt > 0) throw e;
    }
    const pid = await holder(file);
    if (pid !== undefined)
      throw new DataDirInUseError(
        `another edge agent (PID ${pid}) is using the data directory ${dataDir}; stop it first or give this one another --data`,
      );
    fs.rmSync(file, { force: true }); // left by an agent that died: nothing listens on it
  }
}
