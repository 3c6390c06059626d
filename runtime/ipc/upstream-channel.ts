// Upstream IPC channel driver: FIFO (created if needed) -> decoder -> upstream filters -> sink, plus the
// connector process when `launch` is set. The sink routes points to the channel's dest_ids and resolves
// once they are accepted (durable); while too many batches await acceptance the FIFO is not read, so the
// connector blocks on a full pipe instead of the agent buffering without bound.
import type { DataPoint } from "../datapoint.js";
import type { FilterPipeline } from "../filters/pipeline.js";
import type { ClockBase } from "./codec.js";
import type { IpcFormat } from "./schema.js";
import { type ChannelCallbacks, type ChannelSettings, type ConnectorGuard, launchConnector } from "./channel.js";
import { FifoReader, type FifoReaderStats } from "./fifo-reader.js";
import type { ConnectorLauncher, LauncherState } from "./launcher.js";

export interface UpstreamChannelOptions {
  settings: ChannelSettings & { dest_ids: readonly string[] };
  /** The upstream direction's filters (shared by all channels, may be updated while running). */
  filters?: FilterPipeline;
  /** Accepts a batch for the given destinations; resolves when accepted, rejects when it cannot be. */
  sink: (points: DataPoint[], destIds: readonly string[]) => Promise<void> | void;
  clockBase?: ClockBase;
  /** Batches (FIFO reads, <= 64 KiB each) awaiting acceptance before reading pauses. Default 512 (<= 32 MiB). */
  maxPendingBatches?: number;
  /** Called once per logger-msg DType the table does not know (log it; points arrive as `bytes`). */
  onUnknownDType?: (dtype: number) => void;
  onOutput?: (line: string, stream: "stdout" | "stderr") => void;
  guard?: ConnectorGuard;
}

export interface UpstreamChannelStats extends FifoReaderStats {
  /** Points accepted by the sink. */
  accepted: number;
  /** Points the sink refused (not accepted: counted, the reason in lastError). */
  rejected: number;
  pendingBatches: number;
  connector: LauncherState | undefined;
  /** logger-msg DTypes met that the table does not know (each reported once through onUnknownDType). */
  unknownDTypes: number[];
}

export interface UpstreamChannelHandle {
  close(): Promise<void>;
  /** dest_ids changed: routing only, the channel keeps running. */
  setDestIds(ids: readonly string[]): void;
  /** A new measurement started: the device clock reading at its base time. */
  setClockBase(base: ClockBase): void;
  readonly stats: UpstreamChannelStats;
}

export function openUpstreamChannel(opts: UpstreamChannelOptions, cb: ChannelCallbacks): UpstreamChannelHandle {
  const s = opts.settings;
  const maxPending = opts.maxPendingBatches ?? 512;
  let destIds = s.dest_ids;
  let pending = 0;
  let accepted = 0;
  let rejected = 0;
  let sinkError = "";
  let present = false;
  let closed = false;
  let launcher: ConnectorLauncher | undefined;
  const unknownDTypes: number[] = [];

  const settle = (n: number, ok: boolean, err?: unknown) => {
    pending--;
    if (ok) accepted += n;
    else {
      rejected += n;
      sinkError = err instanceof Error ? err.message : String(err);
    }
    if (pending < maxPending) reader.resume();
  };

  const reader = new FifoReader({
    path: s.ipc.path,
    format: s.format,
    srcId: s.id,
    namePrefix: s.data_name_prefix,
    clockBase: opts.clockBase,
    onUnknownDType: (dtype) => {
      unknownDTypes.push(dtype);
      opts.onUnknownDType?.(dtype);
    },
    onRead: (bytes) => {
      if (!present) {
        present = true;
        cb.opened();
      }
      cb.data(bytes);
    },
    onEof: () => {
      if (present) cb.closed("device connector closed the FIFO");
      present = false;
    },
    onPoints: (points) => {
      const out = opts.filters ? opts.filters.apply(points) : points;
      if (out.length === 0) return;
      const n = out.length;
      let r: Promise<void> | void;
      try {
        r = opts.sink(out, destIds);
      } catch (e) {
        rejected += n;
        sinkError = e instanceof Error ? e.message : String(e);
        return;
      }
      if (r === undefined) {
        accepted += n;
        return;
      }
      if (++pending >= maxPending) reader.pause();
      r.then(
        () => settle(n, true),
        (e: unknown) => settle(n, false, e),
      );
    },
  });

  reader.start().then(
    () => {
      if (closed) return;
      launcher = launchConnector(s, cb, opts.onOutput, opts.guard);
    },
    (e: unknown) => cb.failed(e instanceof Error ? e.message : String(e)),
  );

  return {
    async close() {
      closed = true;
      await launcher?.stop();
      await reader.stop();
    },
    setDestIds(ids) {
      destIds = ids;
    },
    setClockBase(base) {
      reader.setClockBase(base);
    },
    get stats() {
      const r = reader.stats;
      return {
        ...r,
        lastError: sinkError || r.lastError,
        accepted,
        rejected,
        pendingBatches: pending,
        connector: launcher?.state,
        unknownDTypes: [...unknownDTypes],
      };
    },
  };
}

/** The channel state's `error` text from its counters ("" when nothing went wrong). */
export function upstreamChannelError(s: UpstreamChannelStats, format?: IpcFormat): string {
  const parts: string[] = [];
  if (s.corrupt > 0)
    parts.push(
      `${s.corrupt} corrupt frame region(s) skipped (${s.skippedBytes} bytes)${format ? formatHint(s, format) : ""}`,
    );
  if (s.invalidNames > 0) parts.push(`${s.invalidNames} point(s) dropped: data name breaks the data-name rules`);
  if (s.truncated > 0) parts.push(`${s.truncated} partial frame(s) discarded when the connector closed the FIFO`);
  if (s.rejected > 0) parts.push(`${s.rejected} point(s) not accepted: ${s.lastError}`);
  return parts.join("; ");
}

/**
 * Bytes in the other format look corrupt in this one: while no frame has decoded, the text names both formats,
 * so a connector writing the other one is found from the channel's state.
 */
function formatHint(s: UpstreamChannelStats, format: IpcFormat): string {
  if (s.frames > 0) return ` reading ${format}`;
  const other = format === "logger-msg" ? "iscp-v2-compat" : "logger-msg";
  return ` and no frame read: the channel reads ${format}; if the connector writes ${other}, set the channel's format to ${other}`;
}
