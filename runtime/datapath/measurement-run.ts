// A measurement while it is being taken: its UUID (iSCP session id and server measurement UUID), its base
// time and clock base, and a destination per upstream id plus `deferred`. Streams attach and detach as
// connections come and go; ending it finishes every destination and marks it ended in the queue.
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { DataPoint } from "../datapoint.js";
import type { MeasurementClock } from "../ipc/clock.js";
import { ChunkBatcher } from "../queue/batcher.js";
import type { Destination } from "../queue/router.js";
import type { DurableQueue } from "../queue/store.js";
import { DEFERRED_ID, type UpstreamSettings } from "../settings/schemas.js";
import { PersistentUpstream } from "./persistent-upstream.js";
import type { StreamLink, UpstreamDestination } from "./upstream-destination.js";
import { VolatileUpstream } from "./volatile-upstream.js";
import type { DataPathCounters } from "./counters.js";

export class MeasurementRun {
  readonly uuid = randomUUID();
  private readonly upstreams = new Map<string, UpstreamDestination>();
  private readonly deferred: ChunkBatcher;
  private readonly deferredSeq: number;
  private ended = false;

  constructor(
    readonly clock: MeasurementClock,
    private readonly queue: DurableQueue,
    private readonly window: () => number,
    private readonly log?: Logger,
    private readonly counters?: DataPathCounters,
  ) {
    queue.startMeasurement(this.uuid, this.clock.baseTimeNs);
    this.deferredSeq = queue.openSequence(this.uuid, DEFERRED_ID, randomUUID(), true, false).ord;
    this.deferred = new ChunkBatcher(queue, this.deferredSeq, { flushPolicy: "interval", flushIntervalMs: 100 });
  }

  get ref() {
    return { uuid: this.uuid, baseTimeNs: this.clock.baseTimeNs };
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** The `deferred` destination: stored for the deferred upload only. */
  deferredDestination(): Destination {
    return { push: (points: readonly DataPoint[]) => this.deferred.push(points) };
  }

  /** The upstream's destination, made anew when its settings changed (the old one finishes). */
  upstream(settings: UpstreamSettings): UpstreamDestination {
    const cur = this.upstreams.get(settings.id);
    if (cur !== undefined && JSON.stringify(cur.settings) === JSON.stringify(settings)) return cur;
    if (cur !== undefined) void cur.finish();
    const dest = settings.persist
      ? new PersistentUpstream(
          this.queue,
          this.ref,
          settings,
          this.window,
          this.log,
          this.counters?.upstream(settings.id),
        )
      : new VolatileUpstream(this.ref, settings, this.window, this.counters?.upstream(settings.id));
    this.upstreams.set(settings.id, dest);
    return dest;
  }

  existing(id: string): UpstreamDestination | undefined {
    return this.upstreams.get(id);
  }

  /** The upstream was disabled or deleted: no more points for it in this measurement. */
  async drop(id: string): Promise<void> {
    const d = this.upstreams.get(id);
    this.upstreams.delete(id);
    await d?.finish();
  }

  attach(id: string, link: StreamLink): Promise<void> | undefined {
    return this.upstreams.get(id)?.attach(link);
  }

  detach(id: string): Promise<void> | undefined {
    return this.upstreams.get(id)?.detach();
  }

  destinations(): UpstreamDestination[] {
    return [...this.upstreams.values()];
  }

  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await Promise.allSettled([...this.upstreams.values()].map((d) => d.finish()));
    await this.deferred.flush().catch(() => undefined);
    await this.queue.closeSequence(this.deferredSeq);
    await this.queue.endMeasurement(this.uuid);
  }
}
