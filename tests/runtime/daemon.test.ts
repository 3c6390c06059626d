// The daemon as a child process: socket mode, stale and live sockets, SIGTERM, and settings that
// survive kill -9 and restarts.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { rm, stat } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../runtime/cli/client.js";
import { eventually, tempDir } from "../support/agent.js";

const BIN = path.resolve("bin/edge-agent.mjs");
const started: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

interface Daemon {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

function runDaemon(args: string[], env: Record<string, string> = {}): Daemon {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env, AGENT_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  child.stdout!.resume();
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, stderr: () => err, exited };
}

/** The agent has opened its data: a settings read waits for that (GET /version is answered before). */
async function ready(api: ApiClient) {
  await eventually(async () => (await api.get("/connection")).status === 200, 30_000);
}

/** True while a process with exactly this command line (`sleep <marker>`) exists. */
function running(marker: string): boolean {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8") === `/bin/sleep\0${marker}\0`) return true;
    } catch {
      // the process ended while we looked
    }
  }
  return false;
}

async function setup() {
  const dir = await tempDir("agentd-");
  dirs.push(dir);
  return { dir, socket: path.join(dir, "run", "agent.sock"), data: path.join(dir, "lib") };
}

describe("edge-agent daemon", () => {
  it("creates the socket with mode 0660 and removes it on SIGTERM", async () => {
    const { socket, data } = await setup();
    const d = runDaemon(["--socket", socket, "--data", data]);
    await ready(new ApiClient(socket));
    expect((await stat(socket)).mode & 0o777).toBe(0o660);
    d.child.kill("SIGTERM");
    expect(await d.exited).toBe(0);
    await expect(stat(socket)).rejects.toThrow();
  }, 120_000);

  it("stops launched connectors on SIGTERM", async () => {
    const { socket, data } = await setup();
    const d = runDaemon(["--socket", socket, "--data", data, "--allow-dir", "/bin"]);
    const api = new ApiClient(socket);
    await ready(api);
    const marker = String(900000 + Math.floor(Math.random() * 99999));
    await api.post("/upstreams", { id: "u" });
    await api.post("/device-connectors/upstream", {
      id: "c",
      format: "iscp-v2-compat",
      dest_ids: ["u"],
      launch: { command: "/bin/sleep", args: [marker] },
    });
    await eventually(() => running(marker), 30_000);
    d.child.kill("SIGTERM");
    expect(await d.exited).toBe(0);
    expect(running(marker)).toBe(false);
  }, 120_000);

  it("launches only programs and FIFOs from allowed directories, with allowed variables only, and says which rule refused", async () => {
    const { socket, data, dir } = await setup();
    const api = new ApiClient(socket);
    const connector = (id: string, extra: Record<string, unknown>) =>
      api.post<{ status: number; detail: string }>("/device-connectors/upstream", {
        id,
        format: "iscp-v2-compat",
        dest_ids: ["deferred"],
        ...extra,
      });
    const d = runDaemon(["--socket", socket, "--data", data]);
    await ready(api);
    // The default: the agent's own folders and /var/run/intdash{,2} only.
    const outside = await connector("a", { launch: { command: "/bin/sleep", args: ["1"] } });
    expect(outside.status).toBe(403);
    expect(outside.body).toMatchObject({
      title: "Forbidden",
      status: 403,
      instance: "/api/v1/device-connectors/upstream",
    });
    expect(outside.body.detail).toMatch(
      /^launch\.command: "\/bin\/sleep" .*outside the directories programs may be launched from.*--allow-dir/,
    );
    const fifo = await connector("b", { ipc: { type: "fifo", path: path.join(dir, "elsewhere", "x.fifo") } });
    expect(fifo.status).toBe(403);
    expect(fifo.body.detail).toMatch(/^ipc\.path: .*outside the directories FIFOs may be created in/);
    expect((await connector("c", { ipc: { type: "fifo", path: "/var/run/intdash/logger_9.tx" } })).status).toBe(201);
    expect((await api.get("/device-connectors/upstream")).body).toMatchObject({ items: [{ id: "c" }] });
    d.child.kill("SIGTERM");
    await d.exited;

    // What the administrator allowed: /bin; variables beyond the allow-list (TZ, LANG, LC_*, CONNECTOR_*) refused unless named.
    const d2 = runDaemon(["--socket", socket, "--data", data, "--allow-dir", "/bin", "--allow-env", "LD_LIBRARY_PATH"]);
    await ready(api);
    for (const name of ["LD_PRELOAD", "NODE_OPTIONS", "PYTHONPATH", "OPENSSL_CONF", "JDK_JAVA_OPTIONS", "MODE"]) {
      const r = await connector(`env-${name}`, {
        launch: { command: "/bin/sleep", args: ["1"], environment: { [name]: "/tmp/x" } },
      });
      expect(r.status, name).toBe(403);
      expect(r.body.detail).toBe(
        `launch.environment.${name}: a launch may set only TZ, LANG, LANGUAGE, LC_*, CONNECTOR_* and the variables the agent's administrator allows by name with --allow-env (--allow-env ${name})`,
      );
    }
    const environment = { LD_LIBRARY_PATH: "/opt/lib", CONNECTOR_MODE: "x", TZ: "UTC", LC_ALL: "C" };
    expect((await connector("ok", { launch: { command: "/bin/sleep", args: ["1"], environment } })).status).toBe(201);
    d2.child.kill("SIGTERM");
    expect(await d2.exited).toBe(0);
  }, 120_000);

  it("keeps its files private: data 0700, LMDB files 0600, the socket 0660 in a 0750 folder", async () => {
    const { socket, data } = await setup();
    const d = runDaemon(["--socket", socket, "--data", data]);
    await ready(new ApiClient(socket));
    const mode = async (p: string) => (await stat(p)).mode & 0o777;
    expect(await mode(data)).toBe(0o700);
    expect(await mode(path.join(data, "settings"))).toBe(0o700);
    expect(await mode(path.join(data, "settings", "settings.lmdb"))).toBe(0o600);
    expect(await mode(path.join(data, "queue"))).toBe(0o700);
    expect(await mode(path.join(data, "queue", "queue.mdb"))).toBe(0o600);
    expect(await mode(path.dirname(socket))).toBe(0o750);
    expect(await mode(socket)).toBe(0o660);
    d.child.kill("SIGTERM");
    expect(await d.exited).toBe(0);
  }, 120_000);

  it("takes the socket and data paths from AGENT_SOCKET and AGENT_DATA", async () => {
    const { socket, data } = await setup();
    const d = runDaemon([], { AGENT_SOCKET: socket, AGENT_DATA: data });
    const api = new ApiClient(socket);
    await ready(api);
    expect((await api.post("/upstreams", { id: "env" })).status).toBe(201);
    expect((await stat(path.join(data, "settings"))).isDirectory()).toBe(true);
    d.child.kill("SIGINT");
    expect(await d.exited).toBe(0);
  }, 120_000);

  it("keeps every acknowledged write across kill -9, replacing the stale socket on restart", async () => {
    const { socket, data } = await setup();
    const first = runDaemon(["--socket", socket, "--data", data]);
    const api = new ApiClient(socket);
    await ready(api);
    await api.patch("/connection", { client_secret: "kept", edge_uuid: "11111111-2222-3333-4444-555555555555" });
    await api.patch("/transport", { send_queue_size: 77 });
    await api.patch("/deferred-upload", { priority: "higher_than_realtime" });
    await api.post("/upstreams", { id: "a", qos: "partial" });
    await api.post("/upstreams", { id: "b" });
    await api.post("/device-connectors/upstream", { id: "dc", format: "iscp-v2-compat", dest_ids: ["a", "deferred"] });
    await api.post("/filters/upstream", {
      id: "f",
      type: "sampling",
      target: { type: "always" },
      change_to: { type: "sampling", interval_ms: 5 },
    });
    await api.delete("/upstreams/b");
    const last = await api.patch("/upstreams/a", { flush_interval: 99 });
    expect(last.status).toBe(200);
    first.child.kill("SIGKILL");
    await first.exited;
    expect((await stat(socket)).isSocket()).toBe(true); // left behind by the crash

    const second = runDaemon(["--socket", socket, "--data", data]);
    await ready(api);
    expect((await api.get("/connection")).body).toMatchObject({ client_secret: "kept" });
    expect((await api.get("/transport")).body).toMatchObject({ send_queue_size: 77 });
    expect((await api.get("/deferred-upload")).body).toMatchObject({ priority: "higher_than_realtime" });
    expect((await api.get<{ items: { id: string }[] }>("/upstreams")).body.items).toEqual([
      {
        id: "a",
        enabled: true,
        recover: true,
        persist: true,
        qos: "partial",
        flush_policy: "interval",
        flush_interval: 99,
      },
    ]);
    expect((await api.get("/device-connectors/upstream/dc")).body).toMatchObject({ dest_ids: ["a", "deferred"] });
    expect((await api.get("/filters/upstream/f")).status).toBe(200);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  }, 120_000);

  it("refuses to start on a live socket, and on a path that is not a socket", async () => {
    const { socket, data, dir } = await setup();
    const first = runDaemon(["--socket", socket, "--data", data]);
    await ready(new ApiClient(socket));
    const second = runDaemon(["--socket", socket, "--data", path.join(dir, "other")]);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toMatch(/another process is listening on .*agent\.sock/);
    expect((await new ApiClient(socket).get("/version")).status).toBe(200); // the first one is untouched
    first.child.kill("SIGTERM");
    await first.exited;

    const plain = path.join(dir, "plain-file");
    await import("node:fs/promises").then((fs) => fs.writeFile(plain, "x"));
    const third = runDaemon(["--socket", plain, "--data", data]);
    expect(await third.exited).toBe(1);
    expect(third.stderr()).toMatch(/is not a socket/);
  }, 120_000);

  it("refuses a second agent on the same data directory, naming the first one's PID", async () => {
    const { socket, data, dir } = await setup();
    const first = runDaemon(["--socket", socket, "--data", data]);
    await ready(new ApiClient(socket));
    const second = runDaemon(["--socket", path.join(dir, "run2", "agent.sock"), "--data", data]);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain(
      `another edge agent (PID ${first.child.pid}) is using the data directory ${data}`,
    );
    expect((await new ApiClient(socket).get("/connection")).status).toBe(200); // the first one is untouched
    // The lock goes with its process: after kill -9 the next agent takes the directory.
    first.child.kill("SIGKILL");
    await first.exited;
    const third = runDaemon(["--socket", socket, "--data", data]);
    await ready(new ApiClient(socket));
    third.child.kill("SIGTERM");
    expect(await third.exited).toBe(0);
  }, 120_000);

  it("answers a usage error with a message and exit code 2, not a stack trace", async () => {
    const { socket, data } = await setup();
    for (const args of [
      ["--sokcet", socket],
      ["--socket"],
      ["--socket", socket, "--data", data, "--log-level", "loud"],
    ]) {
      const d = runDaemon(args);
      expect(await d.exited, args.join(" ")).toBe(2);
      expect(d.stderr()).toMatch(/^edge-agent: .*(--sokcet|--socket|loud)/);
      expect(d.stderr()).toContain("edge-agent --help");
      expect(d.stderr()).not.toMatch(/\n\s+at /);
    }
    await expect(stat(data)).rejects.toThrow(/ENOENT/);
  }, 120_000);

  it("survives garbage on the socket", async () => {
    const { socket, data } = await setup();
    const d = runDaemon(["--socket", socket, "--data", data]);
    const api = new ApiClient(socket);
    await ready(api);
    await new Promise<void>((resolve) => {
      const c = net.connect(socket, () => c.end(Buffer.from([0, 1, 2, 255, 13, 10, 13, 10])));
      c.on("close", () => resolve());
      c.on("error", () => resolve());
      c.resume();
    });
    expect((await api.get("/version")).status).toBe(200);
    d.child.kill("SIGTERM");
    expect(await d.exited).toBe(0);
  }, 120_000);
});
