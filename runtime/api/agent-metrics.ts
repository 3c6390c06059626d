// Prometheus metrics of the edge agent, served on its socket (GET /api/v1/metrics) and on --metrics-listen.
// One registry per agent (never prom-client's global one). The data path only bumps plain numbers
// (datapath/counters.ts, the channels' own stats, the queue's totals); every series here is published by a
// `collect` callback at scrape time, so counting costs the hot path no prom-client call.
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import type { DataPath } from "../datapath/datapath.js";

export class AgentMetrics {
  readonly registry = new Registry();

  constructor(dp: DataPath) {
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
  }

  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
