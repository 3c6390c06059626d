// One agent per data directory, held by a lock on it (lib/dir-lock.ts). Two agents on one directory would share the
// queue and the measurements, and the second would end the first's running measurement in the cloud while its
// points kept arriving.
import path from "node:path";
import { holdLock, type HeldLock } from "../lib/dir-lock.js";
import { SocketInUseError } from "./api/unix-socket.js";

const LOCK_FILE = "agent.lock";

class DataDirInUseError extends SocketInUseError {}

/** Takes the data directory's lock, or throws DataDirInUseError naming the agent that holds it. */
export function lockDataDir(dataDir: string): Promise<HeldLock> {
  return holdLock(
    path.join(dataDir, LOCK_FILE),
    (pid) =>
      new DataDirInUseError(
        `another edge agent (PID ${pid}) is using the data directory ${dataDir}; stop it first or give this one another --data`,
      ),
  );
}
