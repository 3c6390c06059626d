// A real nats-server for tests and benches (Debian's package): on a free port, its files in a temp directory,
// stopped by its PID (stop() waits for the exit and removes the directory).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { once } from "node:events";
import os from "node:os";
import path from "node:path";

/** Where Debian puts nats-server (NATS_SERVER overrides). */
const BIN = process.env.NATS_SERVER ?? "/usr/sbin/nats-server";

export const natsInstalled = () => fs.existsSync(BIN);

export interface NatsServer {
  url: string;
  port: number;
  pid: number;
  /** Stops the server (SIGTERM by PID) and waits for its exit; the directory stays for start(). */
  pause(): Promise<void>;
  /** Starts it again on the same port (after pause()). */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** A port free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, "127.0.0.1");
  await once(s, "listening");
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function waitForPort(port: number, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`nats-server exited (${child.exitCode}): ${fs.readFileSync(log, "utf8")}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, "127.0.0.1");
      s.once("connect", () => (s.destroy(), resolve(true)));
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`nats-server did not listen on ${port}: ${fs.readFileSync(log, "utf8")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startNats(): Promise<NatsServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nats-test-"));
  const port = await freePort();
  const log = path.join(dir, "nats.log");
  let child!: ChildProcess;
  let exited!: Promise<void>;
  const launch = async () => {
    child = spawn(BIN, ["-a", "127.0.0.1", "-p", String(port), "-l", log, "-P", path.join(dir, "nats.pid")], {
      stdio: "ignore",
    });
    exited = new Promise((resolve) => child.once("exit", () => resolve()));
    await waitForPort(port, child, log);
  };
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, "SIGTERM");
    await exited;
  };
  await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    get pid() {
      return child.pid!;
    },
    pause: kill,
    resume: launch,
    async stop() {
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
