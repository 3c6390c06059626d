// What the IPC channel drivers share: the callbacks they report through (the same shape as the
// lifecycle machines' opener callbacks, machines/link.ts) and the settings fields they use.
import { ConnectorLauncher, type ExitInfo } from "./launcher.js";
import type { Ipc, IpcFormat, Launch } from "./schema.js";

export interface ChannelCallbacks {
  /** The device connector is on the other end of the FIFO. */
  opened(): void;
  /** The connector went away (the driver keeps running and waits for it). */
  closed(reason: string): void;
  /** The driver could not start (e.g. the FIFO cannot be created). */
  failed(reason: string): void;
  /** Bytes moved through the FIFO. */
  data(bytes: number): void;
}

export interface ChannelSettings {
  id: string;
  data_name_prefix: string;
  format: IpcFormat;
  ipc: Ipc;
  launch?: Launch | undefined;
}

/** Starts the connector of a channel when `launch` is set; every exit is reported as closed(reason). */
export function launchConnector(
  s: ChannelSettings,
  cb: ChannelCallbacks,
  onOutput?: (line: string, stream: "stdout" | "stderr") => void,
): ConnectorLauncher | undefined {
  if (s.launch === undefined) return undefined;
  const l = new ConnectorLauncher(s.launch, {
    ipcPath: s.ipc.path,
    format: s.format,
    onOutput,
    onExit: (e: ExitInfo) =>
      cb.closed(
        `device connector ${e.reason}` +
          (e.restartInMs !== undefined ? `; restarting in ${e.restartInMs} ms` : "; not restarted (restart policy)"),
      ),
  });
  l.start();
  return l;
}
