// Real channel openers for device-connector IPC (the data path's building blocks in runtime/ipc):
// create the FIFO, read (upstream) or write (downstream) frames, and launch and supervise the
// connector when `launch` is set. What happens to the points is the data path's business, reached
// through hooks; the machine sees the channel's truth: connector attached, data flowing, gone, failed.
import type { DataPoint } from "../runtime/datapoint.js";
import { FifoReader } from "../runtime/ipc/fifo-reader.js";
import { FifoWriter } from "../runtime/ipc/fifo-writer.js";
import { ConnectorLauncher, type ExitInfo } from "../runtime/ipc/launcher.js";
import type { Launch } from "../runtime/ipc/schema.js";
import type { DownstreamIpcSettings, UpstreamIpcSettings } from "../runtime/settings/schemas.js";
import { errorMessage } from "./common.js";
import type { ChannelParams } from "./ipc-channel.js";
import type { Callbacks, Opener } from "./link.js";

export interface ChannelHooks {
  /** Points read from an upstream channel (the data path filters and routes them to dest_ids). */
  onUpstreamPoints?: (settings: UpstreamIpcSettings, points: DataPoint[]) => void;
  /** A downstream channel's writer while it runs (undefined when it stops): the data path writes to it. */
  onDownstreamWriter?: (settings: DownstreamIpcSettings, writer: FifoWriter | undefined) => void;
  /** Connector output lines, for the log. */
  onConnectorOutput?: (id: string, line: string, stream: "stdout" | "stderr") => void;
}

/** Starts the connector if `launch` is set; reports exits as the channel's reason. */
function launcher(settings: UpstreamIpcSettings | DownstreamIpcSettings, cb: Callbacks, hooks: ChannelHooks): ConnectorLauncher | undefined {
  if (!settings.launch) return undefined;
  const launch = settings.launch as Launch;
  const l = new ConnectorLauncher(launch, {
    ipcPath: settings.ipc.path,
    format: settings.format,
    onOutput: hooks.onConnectorOutput ? (line, stream) => hooks.onConnectorOutput!(settings.id, line, stream) : undefined,
    onExit: (info: ExitInfo) => {
      if (info.restartInMs !== undefined) cb.closed(`connector ${info.reason}; restarting in ${info.restartInMs} ms`);
      else cb.failed(`connector ${info.reason}; not restarted (restart policy "${launch.restart.policy}")`, true);
    },
  });
  l.start();
  return l;
}

export function upstreamChannelOpener(hooks: ChannelHooks = {}): Opener<ChannelParams<UpstreamIpcSettings>> {
  return ({ settings }, cb) => {
    let attached = false;
    let stopped = false;
    let connector: ConnectorLauncher | undefined;
    const reader = new FifoReader({
      path: settings.ipc.path,
      format: settings.format,
      srcId: settings.id,
      namePrefix: settings.data_name_prefix,
      onPoints: (points) => hooks.onUpstreamPoints?.(settings, points),
      onRead: (bytes) => {
        // A FIFO reader learns that a connector is there from its first bytes.
        if (!attached) {
          attached = true;
          cb.opened();
        }
        cb.data(bytes);
      },
      onEof: () => {
        attached = false;
        cb.closed("the connector closed the FIFO");
      },
    });
    reader.start().then(
      () => {
        if (!stopped) connector = launcher(settings, cb, hooks);
      },
      (e) => cb.failed(`cannot create FIFO: ${errorMessage(e)}`),
    );
    return {
      close: async () => {
        stopped = true;
        connector?.prepareStop();
        await connector?.stop();
        await reader.stop();
      },
    };
  };
}

export function downstreamChannelOpener(hooks: ChannelHooks = {}): Opener<ChannelParams<DownstreamIpcSettings>> {
  return ({ settings }, cb) => {
    let stopped = false;
    let connector: ConnectorLauncher | undefined;
    const writer = new FifoWriter({
      path: settings.ipc.path,
      format: settings.format,
      namePrefix: settings.data_name_prefix,
      onConnect: () => cb.opened(),
      onDisconnect: (reason) => cb.closed(`the connector went away: ${reason}`),
      onWritten: (bytes) => cb.data(bytes),
    });
    writer.start().then(
      () => {
        if (stopped) return;
        hooks.onDownstreamWriter?.(settings, writer);
        connector = launcher(settings, cb, hooks);
      },
      (e) => cb.failed(`cannot create FIFO: ${errorMessage(e)}`),
    );
    return {
      close: async () => {
        stopped = true;
        hooks.onDownstreamWriter?.(settings, undefined);
        connector?.prepareStop();
        await writer.stop(); // the connector sees EOF and may end by itself
        await connector?.stop(1000);
      },
    };
  };
}
