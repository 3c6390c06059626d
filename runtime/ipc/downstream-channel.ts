// Downstream IPC channel driver: points from the downstreams naming this channel -> FIFO in the channel's
// format (only names under data_name_prefix, the prefix removed), plus the connector process when
// `launch` is set. write() never blocks: the writer's buffer is bounded and drops are counted.
import type { DataPoint } from "../datapoint.js";
import { type ChannelCallbacks, type ChannelSettings, type ConnectorGuard, launchConnector } from "./channel.js";
import { FifoWriter, type FifoWriterStats } from "./fifo-writer.js";
import type { ConnectorLauncher, LauncherState } from "./launcher.js";

export interface DownstreamChannelOptions {
  settings: ChannelSettings;
  /** Bytes that may wait for a slow or absent connector (default 4 MiB). */
  maxBufferedBytes?: number;
  onOutput?: (line: string, stream: "stdout" | "stderr") => void;
  guard?: ConnectorGuard;
}

export interface DownstreamChannelHandle {
  /** Queues points (already through the downstream filters); returns the frames accepted. */
  write(points: readonly DataPoint[]): number;
  close(): Promise<void>;
  readonly stats: FifoWriterStats & { connector: LauncherState | undefined };
}

export function openDownstreamChannel(opts: DownstreamChannelOptions, cb: ChannelCallbacks): DownstreamChannelHandle {
  const s = opts.settings;
  let closed = false;
  let launcher: ConnectorLauncher | undefined;
  const writer = new FifoWriter({
    path: s.ipc.path,
    format: s.format,
    namePrefix: s.data_name_prefix,
    maxBufferedBytes: opts.maxBufferedBytes,
    onConnect: () => cb.opened(),
    onDisconnect: (reason) => cb.closed(reason),
    onWritten: (bytes) => cb.data(bytes),
  });
  writer.start().then(
    () => {
      if (!closed) launcher = launchConnector(s, cb, opts.onOutput, opts.guard);
    },
    (e: unknown) => cb.failed(e instanceof Error ? e.message : String(e)),
  );
  return {
    write: (points) => writer.write(points),
    async close() {
      // Close the FIFO first so the connector reads what is in the pipe, gets EOF and ends by itself.
      closed = true;
      launcher?.prepareStop();
      await writer.stop();
      await launcher?.stop(1000);
    },
    get stats() {
      return { ...writer.stats, connector: launcher?.state };
    },
  };
}

/** The channel state's `error` text from its counters ("" when nothing went wrong). */
export function downstreamChannelError(s: FifoWriterStats): string {
  const parts: string[] = [];
  if (s.dropped > 0) parts.push(`${s.dropped} frame(s) dropped (connector absent or too slow)`);
  if (s.unsupported > 0) parts.push(`${s.unsupported} point(s) with no representation in the FIFO format`);
  return parts.join("; ");
}
