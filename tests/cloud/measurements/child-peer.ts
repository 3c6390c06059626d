// A cloud peer in a process of its own (fixtures/peer-child.ts), for tests that kill it with SIGKILL and start it
// again on the same data directory and port.
import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { NODE_TS } from "../../support/datapath.js";
import type { Call } from "./helpers.js";

const CHILD = path.join(import.meta.dirname, "fixtures", "peer-child.ts");

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

export interface ChildPeer {
  child: ChildProcess;
  url: string;
  /** An admin caller (X-Intdash-Token). */
  call: Call;
}

/** Starts the peer on `dir`; resolves once it listens. `env` goes to the child (e.g. PEER_CHILD_INGEST_JOURNAL). */
export async function startChildPeer(dir: string, port: number, env: Record<string, string> = {}): Promise<ChildPeer> {
  const child = spawn(NODE_TS[0], [...NODE_TS.slice(1), CHILD, dir, String(port)], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`peer child exited with ${code}`)));
  });
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  const call: Call = async (p, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("X-Intdash-Token", token);
    let body = init.body;
    if (init.json !== undefined) headers.set("content-type", "application/json"), (body = JSON.stringify(init.json));
    const res = await fetch(`${url}/api${p}`, { ...init, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* ndjson or empty */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return { child, url, call };
}

/** Kills it with SIGKILL (if it still runs) and waits for it to end. */
export async function killChildPeer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const ended = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await ended;
}
