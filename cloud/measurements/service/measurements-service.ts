// svc.measurements: one object for the routes and the broker (storage hooks), built in init.
import type { Logger } from "pino";
import type { Db } from "../../database/db.js";
import { MeasurementEvents } from "./events.js";
import type { PayloadFiles } from "../storage/payload-files.js";
import { BaseTimeService } from "./basetimes.js";
import { MarkerService } from "./markers.js";
import { SequenceService } from "./sequences.js";
import { MeasurementStore } from "./measurement-store.js";
import type { CommitTrace } from "../ingest/commit-trace.js";
import type { CommitObserver } from "../ingest/commit-observer.js";
import {
  UpstreamStore,
  type BaseTimeIn,
  type UpstreamChunkIn,
  type UpstreamCloseIn,
  type UpstreamRef,
} from "../ingest/upstream-store.js";
import { StorageFullEpisode } from "../ingest/storage-full-episode.js";

export class MeasurementsService {
  readonly events: MeasurementEvents;
  readonly measurements: MeasurementStore;
  readonly baseTimes: BaseTimeService;
  readonly sequences: SequenceService;
  readonly markers: MarkerService;
  readonly upstream: UpstreamStore;
  /** Real-time writes refused by a full disk, logged once per episode. */
  readonly storageFull: StorageFullEpisode;

  constructor(
    db: Db,
    log: Logger,
    files: PayloadFiles,
    opts: { eventWindowMs?: number; commitTrace?: CommitTrace; commits?: CommitObserver } = {},
  ) {
    this.events = new MeasurementEvents(opts.eventWindowMs);
    this.measurements = new MeasurementStore(db, this.events, log, files, opts.commits);
    this.baseTimes = new BaseTimeService(this.measurements);
    this.sequences = new SequenceService(this.measurements);
    this.markers = new MarkerService(this.measurements);
    this.upstream = new UpstreamStore(this.measurements, this.baseTimes, opts.commitTrace);
    this.storageFull = new StorageFullEpisode(log);
  }

  /** Broker hook: a chunk of an upstream; "ok" once committed, "skipped" when that sequence number was stored before. */
  storeUpstreamChunk(info: UpstreamRef, chunk: UpstreamChunkIn) {
    return this.upstream.storeChunk(info, chunk);
  }

  /** Broker hook: a base time sent as upstream metadata. */
  storeBaseTime(info: { projectUuid: string; nodeId: string; persist: boolean }, bt: BaseTimeIn) {
    return this.upstream.storeBaseTime(info, bt);
  }

  /** Broker hook: an upstream closed (or expired); sets its sequence's expectations. */
  closeUpstream(info: UpstreamRef, close: UpstreamCloseIn) {
    return this.upstream.closeUpstream(info, close);
  }

  async close(): Promise<void> {
    await this.upstream.close();
    this.events.close();
    await this.measurements.files.close();
  }
}

declare module "../../services.js" {
  interface Services {
    measurements: MeasurementsService;
  }
}
