// Real stream openers: an iSCP connection to the server (runtime/iscp) per upstream and downstream,
// with the session's token, node id (edge UUID), project and transport. A downstream with filters also
// opens its iSCP downstream; upstream streams are opened per measurement by the data path through the
// `onUpstreamClient` hook. The client does not reconnect by itself here: the stream machine retries,
// so the state the API shows is the state of this connection.
import { IscpClient } from "./iscp-client.js";
import type { ClientDownstream, ReceivedChunk } from "./downstream.js";
import { loadQuicClient, QuicUnavailableError } from "../../proto/transport/quic/load.js";
import { connectWebSocket } from "../../proto/transport/ws/client.js";
import type { DownstreamSettings, UpstreamSettings } from "../settings/schemas.js";
import { QoS } from "../../proto/wire/message.js";
import type { MessageTransport } from "../../proto/transport/message-transport.js";
import type { CompressionParams } from "../../proto/transport/compression/negotiation.js";
import { errorMessage, tokenOf, type Session } from "../../machines/vocabulary.js";
import type { Callbacks, Handle, Opener } from "../../machines/link.js";
import { throttledData } from "../throttled-data.js";
import type { StreamLinkParams } from "../../machines/stream.js";

export const qosOf = (q: "partial" | "unreliable") => (q === "partial" ? QoS.PARTIAL : QoS.UNRELIABLE);

/** The transport settings' compression: none at level 0; context takeover where window bits are set. */
function compressionOf(t: Session["transport"]): CompressionParams | undefined {
  const level = t.compression_level ?? 0;
  if (level === 0) return undefined;
  const bits = t.compression_window_bits ?? 0;
  return { level, contextTakeover: bits > 0, windowBits: bits };
}

/**
 * WebSocket: `ws(s)://<host>/api/iscp/connect` (the server URL's path prefix kept); QUIC: the URL's host and
 * port over UDP, with the QUIC library loaded on the first connect (QuicUnavailableError where it cannot load).
 */
export function transportFor(session: Session, opts: { quicCa?: string } = {}): () => Promise<MessageTransport> {
  const url = new URL(session.connection.server_url);
  const compression = compressionOf(session.transport);
  if (session.transport.protocol === "quic") {
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const host = url.hostname.replace(/^\[|\]$/g, "");
    return async () =>
      (await loadQuicClient()).connectQuic({ host, port, serverName: host, ca: opts.quicCa, compression });
  }
  const ws = `${url.protocol === "https:" ? "wss" : "ws"}://${url.host}${url.pathname.replace(/\/+$/, "")}/api/iscp/connect`;
  return () => connectWebSocket({ url: ws, compression });
}

export interface IscpOpenerHooks {
  /**
   * Called with each connected client of an upstream (the data path opens its iSCP upstream on it and
   * reports sent bytes through `data`); a rejection fails the link.
   */
  onUpstreamClient?: (
    settings: UpstreamSettings,
    client: IscpClient,
    data: (bytes: number) => void,
  ) => Promise<void> | void;
  /** Called with each chunk a downstream receives (the data path routes it to device connectors). */
  onDownstreamChunk?: (settings: DownstreamSettings, chunk: ReceivedChunk) => void;
  quicCa?: string;
}

const chunkBytes = (c: ReceivedChunk) =>
  c.groups.reduce((n, g) => n + g.dataPoints.reduce((m, p) => m + p.payload.length, 0), 0);

function connectionOpener<S extends UpstreamSettings | DownstreamSettings>(
  hooks: IscpOpenerHooks,
  afterConnect: (client: IscpClient, p: StreamLinkParams<S>, cb: Callbacks) => Promise<ClientDownstream | void>,
): Opener<StreamLinkParams<S>> {
  return (p, outer) => {
    const cb = throttledData(outer);
    let client: IscpClient | undefined;
    let stopped = false;
    void (async () => {
      try {
        client = await IscpClient.connect({
          transport: transportFor(p.session, hooks),
          // A function: the client's own reconnect (and resume) after the first token expired needs the new one.
          token: () => tokenOf(p.session),
          nodeId: p.session.connection.edge_uuid,
          projectUuid: p.session.connection.project_uuid,
          // A dropped transport reconnects with backoff and jitter and resumes the streams the broker
          // still holds; the machine's own retry covers what cannot be resumed.
          reconnect: true,
        });
      } catch (e) {
        if (stopped) return;
        if (e instanceof QuicUnavailableError) cb.failed(`transport: ${e.message}`);
        else
          cb.failed(
            `iSCP connect to ${p.session.connection.server_url} (${p.session.transport.protocol}) failed: ${errorMessage(e)}`,
          );
        return;
      }
      if (stopped) return void client.close();
      let interrupted = false;
      client.onStateChange((s, why) => {
        if (stopped) return;
        if (s === "closed") cb.closed(`iSCP connection lost: ${why ?? "closed"}`);
        else if (s === "reconnecting" && !interrupted) {
          interrupted = true;
          cb.interrupted?.(why ?? "transport lost");
        } else if (s === "open" && interrupted) {
          interrupted = false;
          cb.opened();
        }
      });
      try {
        await afterConnect(client, p, cb);
      } catch (e) {
        if (!stopped) cb.failed(`iSCP ${p.direction} open failed: ${errorMessage(e)}`);
        void client.close();
        return;
      }
      if (!stopped) cb.opened();
    })();
    const handle: Handle = {
      close: async () => {
        stopped = true;
        cb.stop();
        await client?.close();
      },
    };
    return handle;
  };
}

export function iscpUpstreamOpener(hooks: IscpOpenerHooks = {}): Opener<StreamLinkParams<UpstreamSettings>> {
  return connectionOpener<UpstreamSettings>(hooks, async (client, p, cb) => {
    await hooks.onUpstreamClient?.(p.settings, client, cb.data);
  });
}

export function iscpDownstreamOpener(hooks: IscpOpenerHooks = {}): Opener<StreamLinkParams<DownstreamSettings>> {
  return connectionOpener<DownstreamSettings>(hooks, async (client, p, cb) => {
    if (p.settings.filters.length === 0) return; // nothing to receive: connected, quiet
    const down = await client.openDownstream({
      qos: qosOf(p.settings.qos),
      filters: p.settings.filters.map((f) => ({
        sourceNodeId: f.src_edge_uuid,
        dataFilters: f.data_filters.map((d) => ({ name: d.name, type: d.type })),
      })),
    });
    // Resumed after a reconnect unless the broker forgot it: then the link starts over.
    down.onError((e) => cb.closed(`iSCP downstream could not be resumed: ${e.message}`));
    down.onChunk((c: ReceivedChunk) => {
      cb.data(chunkBytes(c));
      hooks.onDownstreamChunk?.(p.settings, c);
    });
    return down;
  });
}
