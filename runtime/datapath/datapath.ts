// The agent's data path, wired: device connectors in (upstream IPC channels), upstream filters, the
// durable queue between, upstreams out (real time over iSCP, deferred over REST); and downstreams in,
// downstream filters, downstream IPC channels out. The lifecycle machines decide when things run (they
// call the openers in openers.ts); this object holds what the running pieces share.
import type { Logger } from "pino";
import type { DataPoint } from "../datapoint.js";
import { FilterPipeline } from "../filters/pipeline.js";
import { takeMeasurementClock, type MeasurementClock } from "../ipc/clock.js";
import { DownstreamFanout } from "../ipc/downstream-fanout.js";
import type { UpstreamChannelHandle } from "../ipc/upstream-channel.js";
import type { ReceivedChunk } from "../iscp/downstream.js";
import { DISK_FULL_RATIO, DISK_RESUME_RATIO } from "../queue/disk.js";
import { DestinationRouter } from "../queue/router.js";
import type { DurableQueue } from "../queue/store.js";
import { DEFERRED_ID, type UpstreamSettings } from "../settings/schemas.js";
import type { AllSettings } from "../settings/store.js";
import { MeasurementRun } from "./measurement-run.js";
import type { StreamLink } from "./upstream-destination.js";
import { DataPathCounters } from "./counters.js";

/** A measurement ends this long after its last upstream channel closed (a channel restart keeps it). */
const END_AFTER_MS = 2000;
/** How often pending data and the disk are checked. */
const CHECK_MS = 1000;

export interface DataPathOptions {
  queue: DurableQueue;
  settings: AllSettings;
  log?: Logger;
  /** Bytes waiting for deferred upload (the deferred-upload machine starts the uploader when > 0). */
  onPending?: (bytes: number) => void;
}

export class DataPath {
  readonly queue: DurableQueue;
  readonly upFilters = new FilterPipeline();
  readonly downFilters = new FilterPipeline();
  readonly router = new DestinationRouter();
  readonly fanout = new DownstreamFanout(this.downFilters);
  readonly channels = new Map<string, UpstreamChannelHandle>();
  /** Totals for the metrics, kept across measurements and channel restarts. */
  readonly counters = new DataPathCounters();
  private readonly links = new Map<string, StreamLink>();
  private run: MeasurementRun | undefined;
  /** Taken when streaming starts (the first channel opens); the run is registered with the first point. */
  private clock: MeasurementClock | undefined;
  private endTimer: NodeJS.Timeout | undefined;
  private readonly ending = new Set<Promise<void>>();
  private settings: AllSettings;
  private readonly log?: Logger;
  private readonly checker: NodeJS.Timeout;
  /** Real time is held (also for destinations made while it is: a new measurement, changed settings). */
  private holdRealtime = false;
  /** Why points are refused (the disk is full, the agent is stopping), or undefined. */
  private stopReason: string | undefined;
  /** The agent is stopping: points are refused (as when the disk is full), no new measurement starts. */
  private stopping = false;
  onPending?: (bytes: number) => void;

  constructor(opts: DataPathOptions) {
    this.queue = opts.queue;
    this.log = opts.log;
    this.onPending = opts.onPending;
    this.settings = opts.settings;
    this.apply(opts.settings);
    this.checker = setInterval(() => void this.check(), CHECK_MS);
    this.checker.unref();
  }

  /** The measurement in progress, if any. */
  get current(): MeasurementRun | undefined {
    return this.run;
  }

  /** Settings changed: filters, routing, capacity, upstream destinations. Running channels keep running. */
  apply(all: AllSettings): void {
    this.settings = all;
    this.upFilters.update(all.upstream_filters);
    this.downFilters.update(all.downstream_filters);
    const du = all.deferred_upload;
    this.queue.setCapacity(du.data_storage_capacity, du.limit_data_storage);
    for (const ch of all.upstream_ipcs) this.channels.get(ch.id)?.setDestIds(ch.dest_ids);
    if (this.run !== undefined) this.route(this.run);
  }

  // --- measurements: one while any upstream channel runs ---

  /**
   * An upstream channel starts: the clock of the measurement in progress (taken now if there is none).
   * The measurement itself is registered when its first point is accepted, so idle channels leave no
   * empty measurements behind.
   */
  channelOpened(id: string, handle: UpstreamChannelHandle): MeasurementClock {
    clearTimeout(this.endTimer);
    this.endTimer = undefined;
    this.channels.set(id, handle);
    if (this.run?.isEnded) this.run = undefined;
    this.clock ??= takeMeasurementClock();
    return this.clock;
  }

  private startRun(): MeasurementRun {
    if (this.clock === undefined) {
      // Streaming went on after a stop (disk full): a new measurement, a new clock for the decoders.
      this.clock = takeMeasurementClock();
      for (const h of this.channels.values()) h.setClockBase(this.clock.clockBase);
    }
    const run = new MeasurementRun(
      this.clock,
      this.queue,
      () => this.settings.transport.send_queue_size,
      this.log,
      this.counters,
    );
    this.run = run;
    this.log?.info({ measurement: run.uuid }, "measurement started");
    this.route(run);
    return run;
  }

  channelClosed(id: string, handle: UpstreamChannelHandle): void {
    if (this.channels.get(id) === handle) this.channels.delete(id);
    this.counters.channelClosed(id, handle.stats);
    if (this.channels.size > 0) return;
    clearTimeout(this.endTimer);
    this.endTimer = setTimeout(() => void this.endRun(), END_AFTER_MS);
  }

  /** The sink of every upstream channel. */
  sink = (points: DataPoint[], destIds: readonly string[]): Promise<void> | void => {
    if (this.stopping) return Promise.reject(new Error("the agent is stopping"));
    if (this.stopReason !== undefined) return Promise.reject(new Error(this.stopReason));
    if (this.run === undefined || this.run.isEnded) this.startRun();
    return this.router.route(points, this.routedTo(destIds));
  };

  /** Per channel dest_ids list: where its points go now (routedTo), until the routing changes. */
  private effective = new WeakMap<readonly string[], readonly string[]>();

  /**
   * `deferred` is the catch-up path for what real time missed: next to a persistent upstream it is that
   * upstream's own deferred upload (its unacknowledged chunks, recover: true; see recovering()), so the points
   * are stored once, not a second time in the measurement's deferred sequence. Next to no persistent upstream
   * that takes points now (persist: false, disabled, deleted), `deferred` stores them as it does alone.
   */
  private routedTo(destIds: readonly string[]): readonly string[] {
    let ids = this.effective.get(destIds);
    if (ids === undefined) {
      const persistent = destIds.some(
        (id) => id !== DEFERRED_ID && this.router.has(id) && this.run?.existing(id)?.settings.persist === true,
      );
      ids = persistent ? destIds.filter((id) => id !== DEFERRED_ID) : destIds;
      this.effective.set(destIds, ids);
    }
    return ids;
  }

  /** Upstream ids a channel names together with `deferred`: they recover what real time missed (routedTo). */
  private recovering(): Set<string> {
    const out = new Set<string>();
    for (const ch of this.settings.upstream_ipcs)
      if (ch.enabled && ch.dest_ids.includes(DEFERRED_ID)) for (const id of ch.dest_ids) out.add(id);
    return out;
  }

  async endRun(): Promise<void> {
    clearTimeout(this.endTimer);
    this.endTimer = undefined;
    const run = this.run;
    this.clock = undefined;
    if (run === undefined || run.isEnded) return;
    for (const id of [...this.routedIds()]) this.router.set(id, undefined);
    const p = run.end().then(() => this.log?.info({ measurement: run.uuid }, "measurement ended"));
    this.ending.add(p);
    await p.finally(() => this.ending.delete(p));
  }

  // --- iSCP upstream links (from the stream machines' openers) ---

  async upstreamLinked(settings: UpstreamSettings, link: StreamLink): Promise<void> {
    this.links.set(settings.id, link);
    link.client.onStateChange((s) => {
      if (s === "closed") void this.upstreamUnlinked(settings.id, link);
    });
    // A stream that cannot be opened fails the link (the opener closes it): the stream machine retries with backoff.
    if (this.run === undefined || this.run.isEnded) return;
    try {
      await this.run.attach(settings.id, link);
    } catch (e) {
      this.log?.warn({ upstream: settings.id, err: String(e) }, "iSCP upstream open failed");
      throw e;
    }
  }

  async upstreamUnlinked(id: string, link: StreamLink): Promise<void> {
    if (this.links.get(id) !== link) return;
    this.links.delete(id);
    await this.run?.detach(id);
  }

  /** Any real-time sender with stored chunks not yet sent or acknowledged. */
  realtimeBusy(): boolean {
    return this.run?.destinations().some((d) => d.busy()) ?? false;
  }

  /** Deferred upload with priority higher_than_realtime holds real time back while it uploads. */
  setHoldRealtime(hold: boolean): void {
    this.holdRealtime = hold;
    for (const d of this.run?.destinations() ?? []) d.setHold(hold);
  }

  // --- downstream ---

  deliverDownstream(downstreamId: string, chunk: ReceivedChunk): void {
    const settings = this.settings.downstreams.find((d) => d.id === downstreamId);
    if (settings === undefined) return;
    const points: DataPoint[] = [];
    for (const g of chunk.groups)
      for (const p of g.dataPoints)
        points.push({
          name: g.dataId.name,
          type: g.dataId.type,
          payload: p.payload,
          elapsedNs: Number(p.elapsedTime),
          srcId: chunk.upstream.sourceNodeId,
        });
    this.fanout.deliver(points, settings.dest_ids);
  }

  /**
   * The agent stops: points are refused from now on and the measurement in progress ends while the iSCP links
   * are still up, so the cloud hears the end (stream closes with their totals) before the agent exits. Waits at
   * most `ms`; what has not finished by then goes on, and close() waits for it.
   */
  async stopMeasuring(ms: number): Promise<void> {
    this.stopping = true;
    this.stopReason = "the agent is stopping";
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ms)));
    const run = this.run;
    if (await Promise.race([this.endRun().then(() => false), late]))
      this.log?.warn(
        { measurement: run?.uuid, waitedMs: ms },
        "the measurement's end did not reach the cloud in time; it is sent at the next start",
      );
    clearTimeout(timer);
  }

  async close(): Promise<void> {
    clearInterval(this.checker);
    await this.endRun();
    await Promise.allSettled([...this.ending]);
  }

  // --- internals ---

  private async attach(run: MeasurementRun, upId: string, link: StreamLink): Promise<void> {
    if (run.existing(upId) === undefined) return;
    try {
      await run.attach(upId, link);
    } catch (e) {
      this.log?.warn({ upstream: upId, err: String(e) }, "iSCP upstream open failed");
      void link.client.close();
    }
  }

  /** Router destinations for the run: each enabled upstream, and `deferred`. */
  private route(run: MeasurementRun): void {
    this.effective = new WeakMap();
    const wanted = new Set<string>([DEFERRED_ID]);
    this.router.set(DEFERRED_ID, run.deferredDestination());
    const recovering = this.recovering();
    for (const setting of this.settings.upstreams) {
      if (!setting.enabled) continue;
      const u = setting.persist && recovering.has(setting.id) ? { ...setting, recover: true } : setting;
      wanted.add(u.id);
      const before = run.existing(u.id);
      const dest = run.upstream(u);
      if (dest !== before) dest.setHold(this.holdRealtime);
      this.router.set(u.id, dest);
      const link = this.links.get(u.id);
      if (dest !== before && link !== undefined) void this.attach(run, u.id, link);
    }
    for (const id of this.routedIds()) {
      if (wanted.has(id)) continue;
      this.router.set(id, undefined);
      void run.drop(id);
    }
  }

  private *routedIds(): Iterable<string> {
    const ids = new Set<string>([
      DEFERRED_ID,
      ...this.settings.upstreams.map((u) => u.id),
      ...(this.run?.destinations().map((d) => d.settings.id) ?? []),
    ]);
    for (const id of ids) if (this.router.has(id)) yield id;
  }

  /** Bytes waiting for deferred upload; at least 1 while an uploaded measurement's completion is due. */
  pendingBytes(): number {
    let n = 0;
    for (const s of this.queue.pendingSequences()) n += this.queue.getSequence(s.ord)?.pendingDataSize ?? 0;
    return n === 0 && this.queue.completionsDue().length > 0 ? 1 : n;
  }

  private async check(): Promise<void> {
    this.onPending?.(this.pendingBytes());
    if (this.stopping) return;
    if (this.settings.deferred_upload.limit_data_storage) {
      this.stopReason = undefined;
      return;
    }
    const usage = await this.queue.diskUsage().catch(() => 0);
    if (this.stopReason === undefined && usage >= DISK_FULL_RATIO) {
      this.stopReason = `the disk holding the data directory is ${Math.round(usage * 100)} % full: measurement stopped (limit_data_storage is false)`;
      this.log?.error({ usage }, this.stopReason);
      await this.endRun();
    } else if (this.stopReason !== undefined && usage < DISK_RESUME_RATIO) this.stopReason = undefined;
  }
}
