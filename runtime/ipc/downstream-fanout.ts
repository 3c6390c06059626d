// Points from a downstream (cloud -> agent) to the downstream IPC channels in its dest_ids, through the
// downstream filters (once per batch, before the fan-out). Each channel keeps only names under its
// data_name_prefix and never blocks (see downstream-channel.ts).
import type { DataPoint } from "../datapoint.js";
import type { FilterPipeline } from "../filters/pipeline.js";

export interface DownstreamTarget {
  write(points: readonly DataPoint[]): number;
}

export class DownstreamFanout {
  private readonly channels = new Map<string, DownstreamTarget>();
  /** Points addressed to channels that do not exist (disabled or deleted), per channel id. */
  readonly unrouted = new Map<string, number>();

  constructor(private readonly filters?: FilterPipeline) {}

  set(channelId: string, target: DownstreamTarget | undefined): void {
    if (target === undefined) this.channels.delete(channelId);
    else this.channels.set(channelId, target);
  }

  /** Returns the frames accepted over all channels. `points` may be reordered or shortened by the filters. */
  deliver(points: DataPoint[], destIds: readonly string[]): number {
    const out = this.filters ? this.filters.apply(points) : points;
    if (out.length === 0) return 0;
    let frames = 0;
    for (const id of destIds) {
      const ch = this.channels.get(id);
      if (ch === undefined) this.unrouted.set(id, (this.unrouted.get(id) ?? 0) + out.length);
      else frames += ch.write(out);
    }
    return frames;
  }
}
