// Running totals of the data path for the metrics (runtime/api/agent-metrics.ts): plain numbers bumped
// once per chunk or batch on the hot path, read only when the metrics are scraped. Destinations and
// channel handles come and go with measurements and restarts; the totals here outlive them.
import type { UpstreamChannelHandle, UpstreamChannelStats } from "../ipc/upstream-channel.js";

export interface UpstreamTotals {
  /** Data points sent in real time (a chunk sent again after a resume counts again). */
  pointsSent: number;
  /** Chunks the cloud acknowledged as stored. */
  chunksAcked: number;
}

export interface ChannelTotals {
  /** Points decoded from the FIFO. */
  received: number;
  /** Corrupt regions skipped while resynchronising. */
  corrupt: number;
  /** Restarts of the channel's device connector. */
  restarts: number;
}

const totalsOf = (s: UpstreamChannelStats): ChannelTotals => ({
  received: s.frames,
  corrupt: s.corrupt,
  restarts: s.connector?.restarts ?? 0,
});

export class DataPathCounters {
  private readonly up = new Map<string, UpstreamTotals>();
  /** What closed channel handles counted, by channel id. */
  private readonly retired = new Map<string, ChannelTotals>();

  /** The totals of one upstream, shared by each destination made for it. */
  upstream(id: string): UpstreamTotals {
    let t = this.up.get(id);
    if (!t) this.up.set(id, (t = { pointsSent: 0, chunksAcked: 0 }));
    return t;
  }

  upstreams(): ReadonlyMap<string, UpstreamTotals> {
    return this.up;
  }

  /** A channel handle closed: what it counted is kept. */
  channelClosed(id: string, stats: UpstreamChannelStats): void {
    const t = totalsOf(stats);
    const r = this.retired.get(id);
    this.retired.set(
      id,
      r ? { received: r.received + t.received, corrupt: r.corrupt + t.corrupt, restarts: r.restarts + t.restarts } : t,
    );
  }

  /** Per channel: what closed handles counted plus what the open ones count now. */
  channels(open: ReadonlyMap<string, UpstreamChannelHandle>): Map<string, ChannelTotals> {
    const out = new Map<string, ChannelTotals>();
    for (const [id, r] of this.retired) out.set(id, { ...r });
    for (const [id, h] of open) {
      const t = totalsOf(h.stats);
      const r = out.get(id);
      out.set(
        id,
        r
          ? { received: r.received + t.received, corrupt: r.corrupt + t.corrupt, restarts: r.restarts + t.restarts }
          : t,
      );
    }
    return out;
  }
}
