// Prometheus metrics of the edge agent, served on its socket (GET /api/v1/metrics) and on --metrics-listen.
// One registry per agent (never prom-client's global one). The data path only bumps plain numbers
// (datapath/counters.ts, the channels' own stats, the queue's totals); every series here is published by a
// `collect` callback at scrape time, so counting costs the hot path no prom-client call.
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import type { DataPath } from "../datapath/datapath.js";
import type { LinkEvents } from "../link-events.js";
import { StateCode } from "../settings/schemas.js";
import type { SettingsStore } from "../settings/store.js";
import type { StateReader } from "../supervisor.js";

/** What the metrics read beyond the data path: the streams' states and what the supervisor counted. */
export interface LinkSources {
  store: SettingsStore;
  states: StateReader;
  linkEvents: LinkEvents;
}

const STREAMS = [
  ["upstream", "upstreams"],
  ["downstream", "downstreams"],
] as const;

export class AgentMetrics {
  readonly registry = new Registry();

  constructor(dp: DataPath, links?: LinkSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const channels = () => dp.counters.channels(dp.channels);
    const upstreams = () => dp.counters.upstreams();
    // A counter published from a running total: reset, then inc by the total (prom-client counters have no set).
    const total = <T>(
      name: string,
      help: string,
      label: string,
      rows: () => Iterable<[string, T]>,
      value: (t: T) => number,
    ) =>
      new Counter({
        name,
        help,
        labelNames: [label],
        registers,
        collect() {
          this.reset();
          for (const [id, t] of rows()) this.inc({ [label]: id }, value(t));
        },
      });
    total(
      "agent_points_received_total",
      "Points decoded from each upstream IPC channel's FIFO",
      "channel",
      channels,
      (t) => t.received,
    );
    total(
      "agent_fifo_corrupt_total",
      "Corrupt regions skipped in each upstream IPC channel's FIFO",
      "channel",
      channels,
      (t) => t.corrupt,
    );
    total(
      "agent_connector_restarts_total",
      "Restarts of each upstream IPC channel's device connector",
      "channel",
      channels,
      (t) => t.restarts,
    );
    total(
      "agent_points_sent_total",
      "Points sent in real time on each upstream (again after a resume)",
      "upstream",
      upstreams,
      (t) => t.pointsSent,
    );
    total(
      "agent_chunks_acked_total",
      "Chunks each upstream's cloud acknowledged as stored",
      "upstream",
      upstreams,
      (t) => t.chunksAcked,
    );
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    // prom-client's defaults have the heap and external memory, not the ArrayBuffers (Buffers) within the latter.
    gauge(
      "agent_array_buffers_bytes",
      "Bytes of ArrayBuffers and Buffers the agent holds (process.memoryUsage().arrayBuffers)",
      () => process.memoryUsage().arrayBuffers,
    );
    gauge(
      "agent_queue_bytes",
      "Bytes of chunks in the durable queue (sent and unsent, until acknowledged or uploaded)",
      () => dp.queue.stats.bytes,
    );
    gauge("agent_queue_chunks", "Chunks in the durable queue", () => dp.queue.stats.chunks);
    gauge("agent_deferred_pending_bytes", "Bytes waiting for the deferred upload", () => dp.pendingBytes());
    const counter = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    counter(
      "agent_queue_evicted_chunks_total",
      "Chunks deleted unsent, oldest first, because the queue reached deferred_upload.data_storage_capacity",
      () => dp.queue.stats.evictedChunks,
    );
    counter(
      "agent_queue_evicted_bytes_total",
      "Bytes of the chunks deleted unsent because the queue reached its capacity",
      () => dp.queue.stats.evictedBytes,
    );
    gauge(
      "agent_oldest_unacked_age_seconds",
      "Age of the oldest data in the durable queue that the cloud has not acknowledged yet (0 when there is none)",
      () => {
        const t = dp.queue.oldestChunkTime();
        return t === undefined ? 0 : Math.max(0, (Date.now() - t) / 1000);
      },
    );
    if (links) this.linkMetrics(links, counter);
  }

  /** Each stream's connection state, its reconnects, and the token renewals. */
  private linkMetrics(
    { store, states, linkEvents }: LinkSources,
    counter: (name: string, help: string, read: () => number) => Counter,
  ): void {
    const registers = [this.registry];
    new Gauge({
      name: "agent_stream_state",
      help: "1 for each upstream's and downstream's current connection state (none, connected, quiet, disconnected, error), 0 for the others",
      labelNames: ["direction", "stream", "state"],
      registers,
      collect() {
        this.reset();
        for (const [direction, kind] of STREAMS)
          for (const item of store.list(kind)) {
            const code = states.state(kind, item).code;
            for (const state of StateCode.literals)
              this.set({ direction, stream: item.id, state }, state === code ? 1 : 0);
          }
      },
    });
    new Counter({
      name: "agent_stream_reconnects_total",
      help: "Times each stream's connection to the cloud came back after it was lost (resumed or opened again)",
      labelNames: ["direction", "stream"],
      registers,
      collect() {
        this.reset();
        for (const [id, n] of linkEvents.reconnects) {
          const [kind, stream] = [id.slice(0, id.indexOf("/")), id.slice(id.indexOf("/") + 1)];
          this.inc({ direction: kind === "upstreams" ? "upstream" : "downstream", stream }, n);
        }
      },
    });
    counter(
      "agent_token_refreshes_total",
      "Access tokens the agent obtained to replace the one it held (renewed before expiry)",
      () => linkEvents.tokenRefreshes,
    );
  }

  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
