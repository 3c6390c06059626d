// The cloud peer as a real child process (bin/cloud-peer.mjs on port 0, a temp data dir), so a test can
// watch what the server process holds: its open descriptors under /proc/<pid>/fd.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

import { dropTestDatabase, testDatabaseFor } from "../../support/test-database.js";

const BIN = path.resolve(import.meta.dirname, "../../../bin/cloud-peer.mjs");

export interface PeerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Open file descriptors of the server process right now. */
  fds(): number;
  stop(): Promise<void>;
}

/**
 * `cloud-peer --listen 127.0.0.1:0 --data DIR` as a real child process; resolves once it listens.
 * `bin` is this checkout's by default (an installed package's for the install tests).
 */
export async function spawnPeerAt(
  dataDir: string,
  env: Record<string, string> = {},
  bin = BIN,
  /** Replace the listen flags (default: a free HTTP port). */
  listenArgs = ["--listen", "127.0.0.1:0"],
): Promise<{ child: ChildProcess; url: string; exit: Promise<number | null> }> {
  const database = await testDatabaseFor(dataDir);
  const child = spawn(process.execPath, [bin, ...listenArgs, "--data", dataDir], {
    env: {
      ...process.env,
      CLOUD_ADMIN_PASSWORD: "Admin-password-1",
      CLOUD_LOG_LEVEL: "warn",
      ...(database ? { CLOUD_DATABASE: database } : {}),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (c) => {
      out += String(c);
      const m = out.match(/listening on (https?:\/\/\S+)/);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on("data", (c) => (out += String(c)));
    void exit.then((code) => reject(new Error(`cloud-peer exited (${code}): ${out}`)));
  });
  return { child, url, exit };
}

/** A peer process in a temp data dir of its own, removed by stop(). */
export async function spawnPeerProcess(env: Record<string, string> = {}): Promise<PeerProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
  const { child, url, exit } = await spawnPeerAt(dataDir, env);
  return {
    child,
    url,
    port: Number(new URL(url).port),
    fds: () => fs.readdirSync(`/proc/${child.pid}/fd`).length,
    async stop() {
      child.kill("SIGTERM");
      await exit;
      fs.rmSync(dataDir, { recursive: true, force: true });
      await dropTestDatabase(dataDir);
    },
  };
}

export interface UpgradeOutcome {
  /** Everything the server sent. */
  response: string;
  /** Whether the server closed the connection (false: still open when the wait ended). */
  closedByServer: boolean;
  socket: net.Socket;
}

/**
 * Sends one WebSocket upgrade request on a raw socket and waits (at most `waitMs`) for the server to
 * answer and close. The socket is left open on our side unless `halfClose` ends it after the request,
 * so only the server can free its end; the caller destroys it.
 */
export function rawUpgrade(
  port: number,
  target: string,
  o: { method?: string; halfClose?: boolean; waitMs?: number } = {},
): Promise<UpgradeOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let response = "";
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ response, closedByServer, socket });
    };
    const timer = setTimeout(() => finish(false), o.waitMs ?? 5000);
    socket.on("error", () => finish(true));
    socket.on("data", (d) => (response += d.toString("latin1")));
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("connect", () => {
      socket.write(
        `${o.method ?? "GET"} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
      if (o.halfClose) socket.end();
    });
  });
}

/** Status code and parsed JSON body of a raw HTTP response. */
export function parseResponse(raw: string): { status: number; headers: string; body: unknown } {
  const [head = "", body = ""] = raw.split("\r\n\r\n");
  const status = Number(head.split(" ")[1]);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = body;
  }
  return { status, headers: head.toLowerCase(), body: json };
}

/** Waits until the server's descriptor count is at most `max` (sockets close a moment after their answer). */
export async function fdsSettle(p: PeerProcess, max: number, ms = 10_000): Promise<number> {
  const t0 = Date.now();
  let n = p.fds();
  while (n > max && Date.now() - t0 < ms) {
    await new Promise((r) => setTimeout(r, 50));
    n = p.fds();
  }
  return n;
}
