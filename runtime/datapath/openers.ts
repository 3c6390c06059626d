// The openers the lifecycle machines run (machines/link.ts), backed by the data path: upstream IPC
// channels feed the measurement in progress, downstream IPC channels take what downstreams receive,
// and iSCP stream links hand their connection to the data path.
import type { Logger } from "pino";
import { iscpDownstreamOpener, iscpUpstreamOpener } from "../iscp/openers.js";
import type { ChannelParams } from "../../machines/ipc-channel.js";
import type { Opener } from "../../machines/link.js";
import { throttledData } from "../throttled-data.js";
import { type ConnectorGuard, watchProblems } from "../ipc/channel.js";
import { launchRefusal, type LaunchPolicy } from "../ipc/launch-policy.js";
import { downstreamChannelError, openDownstreamChannel } from "../ipc/downstream-channel.js";
import { openUpstreamChannel, upstreamChannelError, type UpstreamChannelHandle } from "../ipc/upstream-channel.js";
import type { DownstreamIpcSettings, UpstreamIpcSettings } from "../settings/schemas.js";
import type { Openers } from "../supervisor.js";
import type { DataPath } from "./datapath.js";

export interface DataPathOpenerOptions {
  log?: Logger;
  /** CA certificate (PEM) trusted for QUIC, when the cloud's certificate is self-signed. */
  quicCa?: string;
  /** Checked again when a channel opens: settings stored before the policy was narrowed are not run. */
  launchPolicy?: LaunchPolicy;
  guard?: ConnectorGuard;
}

/** A channel the launch policy refuses: reported as a lasting failure, nothing created or started. */
function refusedChannel(
  o: DataPathOpenerOptions,
  settings: UpstreamIpcSettings | DownstreamIpcSettings,
  failed: (reason: string, permanent: boolean) => void,
) {
  const refused = o.launchPolicy && launchRefusal(o.launchPolicy, settings);
  if (!refused) return undefined;
  o.log?.warn({ channel: settings.id, reason: refused }, "device connector refused by the launch policy");
  // Reported after the opener returned, as the machines expect of any opener's callbacks.
  queueMicrotask(() => failed(`refused by the agent's launch policy: ${refused}`, true));
  return { close: async () => {} };
}

function upstreamIpcOpener(dp: DataPath, o: DataPathOpenerOptions): Opener<ChannelParams<UpstreamIpcSettings>> {
  return ({ settings }, outer) => {
    const refused = refusedChannel(o, settings, (r, p) => outer.failed(r, p));
    if (refused) return refused;
    const cb = throttledData(outer);
    const h: UpstreamChannelHandle = openUpstreamChannel(
      {
        settings,
        filters: dp.upFilters,
        sink: dp.sink,
        onUnknownDType: (dtype) =>
          o.log?.warn({ channel: settings.id, dtype }, "unknown logger-msg DType: its points are sent as bytes"),
        onOutput: (line, stream) => o.log?.info({ connector: settings.id, stream }, line),
        guard: o.guard,
      },
      cb,
    );
    // Frames are decoded asynchronously: the measurement's clock base is set before the first one.
    h.setClockBase(dp.channelOpened(settings.id, h).clockBase);
    const unwatch = watchProblems(
      cb,
      () => upstreamChannelError(h.stats, settings.format),
      () => h.stats.rejected,
    );
    return {
      close: async () => {
        unwatch();
        cb.stop();
        await h.close();
        dp.channelClosed(settings.id, h);
      },
    };
  };
}

function downstreamIpcOpener(dp: DataPath, o: DataPathOpenerOptions): Opener<ChannelParams<DownstreamIpcSettings>> {
  return ({ settings }, outer) => {
    const refused = refusedChannel(o, settings, (r, p) => outer.failed(r, p));
    if (refused) return refused;
    const cb = throttledData(outer);
    const h = openDownstreamChannel(
      { settings, onOutput: (line, stream) => o.log?.info({ connector: settings.id, stream }, line), guard: o.guard },
      cb,
    );
    dp.fanout.set(settings.id, h);
    const unwatch = watchProblems(
      cb,
      () => downstreamChannelError(h.stats),
      () => h.stats.dropped,
    );
    return {
      close: async () => {
        unwatch();
        cb.stop();
        dp.fanout.set(settings.id, undefined);
        await h.close();
      },
    };
  };
}

export function dataPathOpeners(dp: DataPath, o: DataPathOpenerOptions = {}): Openers {
  return {
    upstream: iscpUpstreamOpener({
      quicCa: o.quicCa,
      onUpstreamClient: (settings, client, data) => dp.upstreamLinked(settings, { client, data }),
    }),
    downstream: iscpDownstreamOpener({
      quicCa: o.quicCa,
      onDownstreamChunk: (settings, chunk) => dp.deliverDownstream(settings.id, chunk),
    }),
    upstreamIpc: upstreamIpcOpener(dp, o),
    downstreamIpc: downstreamIpcOpener(dp, o),
  };
}
