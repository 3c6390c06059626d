// What the peers' set-up steps share: installing a Debian package when its program is missing, a free
// loopback port, and the client shape the producer and consumer children use for either broker.
import { spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { sleep, stopChild } from "../../runtime/device-bench/children.js";

export interface PeerBroker {
  name: string;
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * A broker client: QoS 1 / acked publishes, and a subscription whose handler may return a promise: the
 * client takes no further message until it settles (the consumer's back-pressure while its store is full).
 */
export interface PeerClient {
  /** Publishes one message; `done` is called when the broker acknowledged it. */
  publish(payload: Uint8Array, done: (err?: Error) => void): void;
  /** Resolves once the subscription is in place. */
  subscribe(onMessage: (payload: Uint8Array) => void | Promise<void>): Promise<void>;
  close(): Promise<void>;
}

const run = (cmd: string, args: string[]) =>
  spawnSync(cmd, args, { encoding: "utf8", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });

/** Where `program` is: on PATH, or in /usr/sbin and /usr/bin (root's sbin may not be on PATH). */
function findProgram(program: string): string | undefined {
  const dirs = [
    ...(process.env.PATH ?? "").split(":").filter(Boolean),
    "/usr/sbin",
    "/usr/bin",
    "/usr/local/sbin",
    "/usr/local/bin",
  ];
  return dirs.map((d) => path.join(d, program)).find((f) => fs.existsSync(f));
}

/**
 * Installs `pkg` from Debian's packages unless `program` is there (apt-get update first if the install fails);
 * returns its path. An environment variable named after the program (MOSQUITTO, NATS_SERVER) gives its path
 * instead: then nothing is installed, and a path that is not there fails the case at once.
 */
export function ensureDebianPackage(pkg: string, program: string): string {
  const variable = program.toUpperCase().replace(/-/g, "_");
  const given = process.env[variable];
  if (given !== undefined) {
    if (!fs.existsSync(given)) throw new Error(`${program} not found: ${variable}=${given} is not there`);
    return given;
  }
  const found = findProgram(program);
  if (found) return found;
  console.error(`bench: installing the Debian package ${pkg} (for ${program})`);
  let r = run("apt-get", ["install", "-y", "--no-install-recommends", pkg]);
  if (r.status !== 0) {
    run("apt-get", ["update"]);
    r = run("apt-get", ["install", "-y", "--no-install-recommends", pkg]);
  }
  const installed = findProgram(program);
  if (r.status !== 0 || !installed)
    throw new Error(`cannot install ${pkg}: ${(r.stderr || r.stdout || String(r.error)).slice(-500)}`);
  return installed;
}

export async function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
    s.on("error", reject);
  });
}

/** Waits until something accepts TCP connections on the port (the broker is up) or the child exits. */
export async function waitForPort(port: number, child: ChildProcess, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, "127.0.0.1", () => (c.destroy(), resolve(true)));
      c.on("error", () => resolve(false));
    });
    if (up) return;
    if (Date.now() > end) {
      await stopChild(child, "SIGKILL");
      throw new Error(`${what} did not listen on ${port} within ${ms} ms`);
    }
    await sleep(50);
  }
}
