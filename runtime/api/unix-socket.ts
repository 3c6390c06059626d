// Serving HTTP on a Unix domain socket: a socket file left by a crashed daemon is replaced, a live one
// (another agent answering) is refused, and the socket is created with mode 0660.
import { chmodSync, lstatSync, unlinkSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { makeDir } from "../private-files.js";

export class SocketInUseError extends Error {}

/** True if something accepts connections on the socket file. */
function isLive(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(socketPath);
    c.once("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });
}

async function clearStale(socketPath: string): Promise<void> {
  let st;
  try {
    st = lstatSync(socketPath);
  } catch {
    return; // nothing there
  }
  if (!st.isSocket()) throw new SocketInUseError(`${socketPath} exists and is not a socket; refusing to replace it`);
  if (await isLive(socketPath))
    throw new SocketInUseError(`another process is listening on ${socketPath}; is an edge agent already running?`);
  unlinkSync(socketPath);
}

/**
 * Makes sure the socket path is free: creates its directory, removes a stale socket, and throws
 * SocketInUseError for a live one. The daemon calls this before it opens anything else, so a second
 * agent is refused before it can touch the running agent's data or launch its connectors again.
 */
export async function claimSocket(socketPath: string): Promise<void> {
  // 0750: the agent's group (its operators) may reach the socket; no one else may even look.
  makeDir(path.dirname(socketPath), 0o750);
  await clearStale(socketPath);
}

export async function listenUnix(handler: http.RequestListener, socketPath: string): Promise<http.Server> {
  // Checked again here: another agent may have started since claimSocket.
  await claimSocket(socketPath);
  const server = http.createServer(handler);
  // Keep idle keep-alive connections from holding shutdown up.
  server.keepAliveTimeout = 5_000;
  // The umask makes the socket 0660 from its first moment; chmod makes sure whatever the umask was.
  const oldMask = process.umask(0o117);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } finally {
    process.umask(oldMask);
  }
  chmodSync(socketPath, 0o660);
  return server;
}

/** Stops accepting, ends idle connections, and removes the socket file. */
export async function closeUnix(server: http.Server, socketPath: string): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 2_000).unref();
  });
  try {
    unlinkSync(socketPath);
  } catch {
    // already gone
  }
}
