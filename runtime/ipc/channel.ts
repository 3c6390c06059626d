// What the IPC channel drivers share: the callbacks they report through (the same shape as the
// lifecycle machines' opener callbacks, machines/link.ts) and the settings fields they use.
import { ConnectorLauncher, type ExitInfo } from "./launcher.js";
import { pidFileFor } from "./pid-file.js";
import type { Ipc, IpcFormat, Launch } from "./schema.js";

export interface ChannelCallbacks {
  /** The device connector is on the other end of the FIFO. */
  opened(): void;
  /** The connector went away (the driver keeps running and waits for it). */
  closed(reason: string): void;
  /** The driver could not start (e.g. the FIFO cannot be created), or (permanent) the connector will not be restarted. */
  failed(reason: string, permanent?: boolean): void;
  /** Bytes moved through the FIFO. */
  data(bytes: number): void;
  /** Counts of what was skipped, refused or dropped ("" when nothing); severe: refusing data now. */
  problem?(text: string, severe?: boolean): void;
}

export interface ChannelSettings {
  id: string;
  data_name_prefix: string;
  format: IpcFormat;
  ipc: Ipc;
  launch?: Launch | undefined;
}

/** What the agent's administrator decided about launching (the daemon's options). */
export interface ConnectorGuard {
  /** The agent's private directory for connector pid files. */
  pidDir?: string;
  /** Told about pid files found but not believed. */
  notice?: (message: string) => void;
  /** Variables of the agent's environment connectors get beyond the allow-list (`--allow-env`, launch-env.ts). */
  allowEnv?: readonly string[];
}

/** Starts the connector of a channel when `launch` is set; every exit is reported as closed(reason). */
export function launchConnector(
  s: ChannelSettings,
  cb: ChannelCallbacks,
  onOutput?: (line: string, stream: "stdout" | "stderr") => void,
  guard: ConnectorGuard = {},
): ConnectorLauncher | undefined {
  if (s.launch === undefined) return undefined;
  const l = new ConnectorLauncher(s.launch, {
    ipcPath: s.ipc.path,
    format: s.format,
    onOutput,
    pidFile: guard.pidDir === undefined ? undefined : pidFileFor(guard.pidDir, s.ipc.path),
    onNotice: guard.notice,
    allowEnv: guard.allowEnv,
    // An exit the restart policy answers with a restart is a passing gap, and so is a clean exit it
    // does not restart (the connector finished); a failure it gives up on is the channel's error
    // until the settings change.
    onExit: (e: ExitInfo) => {
      if (e.restartInMs !== undefined) cb.closed(`device connector ${e.reason}; restarting in ${e.restartInMs} ms`);
      else if (e.code === 0)
        cb.closed(`device connector ${e.reason}; not restarted (restart policy "${s.launch!.restart.policy}")`);
      else cb.failed(`connector ${e.reason}; not restarted (restart policy "${s.launch!.restart.policy}")`, true);
    },
  });
  l.start();
  return l;
}

/**
 * Reports a running channel's problems once a second while they change: `text()` counts what was
 * skipped or dropped so far; `refused()` is a running count of refused data (growth since the last
 * look makes the problem severe). Returns the function that stops watching.
 */
export function watchProblems(
  cb: Pick<ChannelCallbacks, "problem">,
  text: () => string,
  refused: () => number,
  everyMs = 1000,
): () => void {
  let lastText = "";
  let lastRefused = refused();
  let lastSevere = false;
  const timer = setInterval(() => {
    const t = text();
    const r = refused();
    const severe = r > lastRefused;
    lastRefused = r;
    if (t === lastText && severe === lastSevere) return;
    lastText = t;
    lastSevere = severe;
    cb.problem?.(t, severe);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
