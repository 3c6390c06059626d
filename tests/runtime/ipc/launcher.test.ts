import { readFile } from "node:fs/promises";
import { join } from "node:path";
import * as Schema from "effect/Schema";
import { describe, expect, it } from "vitest";
import type { DataPoint } from "../../../runtime/datapoint.js";
import { FifoReader } from "../../../runtime/ipc/fifo-reader.js";
import { ConnectorLauncher, type ExitInfo, backoffDelay } from "../../../runtime/ipc/launcher.js";
import { Launch } from "../../../runtime/ipc/schema.js";
import { NODE_TS, SAMPLE_CONNECTOR, own, perTestDir, seqOf, waitFor } from "../../support/datapath.js";

let dir: string;
const stops = perTestDir((d) => (dir = d));

const decodeLaunch = Schema.decodeUnknownSync(Launch);

describe("launch settings", () => {
  it("fills defaults and rejects bad input", () => {
    const l = decodeLaunch({ command: "x" });
    expect(l.restart).toEqual({
      policy: "always",
      initial_backoff_ms: 500,
      max_backoff_ms: 30000,
      multiplier: 2,
      reset_after_ms: 10000,
      max_restarts: 0,
    });
    expect(() => decodeLaunch({ command: "" })).toThrow();
    expect(() => decodeLaunch({ command: "x", environment: { "1BAD": "v" } })).toThrow();
    expect(() => decodeLaunch({ command: "x", restart: { policy: "sometimes" } })).toThrow();
  });

  it("backs off exponentially up to the maximum", () => {
    const p = decodeLaunch({ command: "x", restart: { initial_backoff_ms: 100, max_backoff_ms: 1000 } }).restart;
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(p, n))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

describe("connector launcher", () => {
  it("starts the sample connector on the FIFO and restarts it with backoff when it exits", async () => {
    const path = join(dir, "up.fifo");
    const got: DataPoint[] = [];
    const reader = new FifoReader({
      path,
      format: "iscp-v2-compat",
      srcId: "dc",
      onPoints: (ps) => got.push(...ps.map(own)),
    });
    stops.push(() => reader.stop());
    await reader.start();
    const exits: ExitInfo[] = [];
    const launcher = new ConnectorLauncher(
      decodeLaunch({
        command: NODE_TS[0],
        args: [
          ...NODE_TS.slice(1),
          SAMPLE_CONNECTOR,
          "--path",
          "${ipc.path}",
          "--rate",
          "0",
          "--count",
          "100",
          "--exit-code",
          "3",
        ],
        restart: { policy: "on-failure", initial_backoff_ms: 50, max_backoff_ms: 100, max_restarts: 2 },
      }),
      { ipcPath: path, format: "iscp-v2-compat", onExit: (e) => exits.push(e) },
    );
    stops.push(() => launcher.stop());
    launcher.start();
    await waitFor(() => launcher.state.finished, 30_000, "three runs");
    expect(exits.map((e) => e.reason)).toEqual(["exited with code 3", "exited with code 3", "exited with code 3"]);
    expect(exits.map((e) => e.restartInMs)).toEqual([50, 100, undefined]);
    expect(launcher.state.restarts).toBe(2);
    await waitFor(() => got.length === 300, 30_000, "300 points");
    expect(got.map(seqOf).slice(0, 100)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it("passes the FIFO path and environment, and stops a running connector with SIGTERM", async () => {
    const out = join(dir, "env.txt");
    const exits: ExitInfo[] = [];
    const launcher = new ConnectorLauncher(
      decodeLaunch({
        command: "sh",
        args: [
          "-c",
          'echo "$EDGE_AGENT_IPC_PATH $EDGE_AGENT_IPC_FORMAT $CONNECTOR_GREETING" > "$0"; exec sleep 30',
          out,
        ],
        environment: { CONNECTOR_GREETING: "hi" },
      }),
      { ipcPath: "/tmp/some.fifo", format: "logger-msg", onExit: (e) => exits.push(e) },
    );
    launcher.start();
    await waitFor(() => launcher.state.running, 30_000, "running");
    let text = "";
    await waitFor(
      () => text.endsWith("\n"),
      30_000,
      "env file",
      async () => {
        text = await readFile(out, "utf8").catch(() => "");
      },
    );
    expect(text.trim()).toBe("/tmp/some.fifo logger-msg hi");
    await launcher.stop();
    expect(exits.map((e) => e.reason)).toEqual(["killed by signal SIGTERM"]);
    expect(exits[0]!.restartInMs).toBeUndefined();
    expect(launcher.state.running).toBe(false);
  });

  it("reports a command that cannot start and retries it per policy", async () => {
    const exits: ExitInfo[] = [];
    const launcher = new ConnectorLauncher(
      decodeLaunch({
        command: join(dir, "missing-binary"),
        restart: { policy: "always", initial_backoff_ms: 10, max_restarts: 1 },
      }),
      { ipcPath: "/tmp/x.fifo", format: "iscp-v2-compat", onExit: (e) => exits.push(e) },
    );
    stops.push(() => launcher.stop());
    launcher.start();
    await waitFor(() => launcher.state.finished, 30_000, "gave up");
    expect(exits.length).toBe(2);
    expect(exits[0]!.reason).toMatch(/^failed to start: .*ENOENT/);
  });

  it("kills a connector left running by a previous agent (pid file) before starting a new one", async () => {
    const ipcPath = join(dir, "x.fifo");
    const pidFile = join(dir, "connectors", "x.pid");
    const exits: ExitInfo[] = [];
    const sleeper = decodeLaunch({ command: "sh", args: ["-c", "exec sleep 30"], restart: { policy: "never" } });
    // The "crashed agent": its launcher is never stopped.
    const old = new ConnectorLauncher(sleeper, {
      ipcPath,
      pidFile,
      format: "iscp-v2-compat",
      onExit: (e) => exits.push(e),
    });
    old.start();
    await waitFor(() => old.state.pid !== undefined, 30_000, "old connector");
    let recorded = "";
    await waitFor(
      () => recorded === String(old.state.pid),
      30_000,
      "pid file",
      async () => {
        recorded = (await readFile(pidFile, "utf8").catch(() => "")).split(" ")[0]!;
      },
    );
    const notices: string[] = [];
    const fresh = new ConnectorLauncher(sleeper, {
      ipcPath,
      pidFile,
      format: "iscp-v2-compat",
      onNotice: (m) => notices.push(m),
    });
    stops.push(() => fresh.stop());
    fresh.start();
    await waitFor(() => exits.length === 1, 30_000, "old connector killed");
    expect(exits[0]!.reason).toBe("killed by signal SIGKILL");
    expect(notices).toEqual([]);
    await waitFor(() => fresh.state.running, 30_000, "new connector");
    await fresh.stop();
    await expect(readFile(pidFile, "utf8")).rejects.toThrow();
  });

  it("ends what a connector left running in its process group when it exits", async () => {
    const pidOut = join(dir, "bg.pid");
    const exits: ExitInfo[] = [];
    const launcher = new ConnectorLauncher(
      decodeLaunch({
        command: "sh",
        args: ["-c", 'sleep 30 & echo $! > "$0"; exit 4', pidOut],
        restart: { policy: "never" },
      }),
      { ipcPath: join(dir, "y.fifo"), format: "iscp-v2-compat", onExit: (e) => exits.push(e) },
    );
    launcher.start();
    await waitFor(() => exits.length === 1, 30_000, "exit");
    expect(exits[0]!.reason).toBe("exited with code 4");
    const bg = Number((await readFile(pidOut, "utf8")).trim());
    await waitFor(
      () => {
        try {
          process.kill(bg, 0);
          return false;
        } catch {
          return true;
        }
      },
      30_000,
      "background child gone",
    );
  });
});
