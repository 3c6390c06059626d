// persist: false: points go straight to the iSCP upstream's buffer, nothing is stored; dropped (counted)
// while there is no stream, and beyond send_queue_size unacknowledged chunks.
import type { DataPoint } from "../datapoint.js";
import type { ClientUpstream } from "../iscp/upstream.js";
import type { UpstreamSettings } from "../settings/schemas.js";
import type { UpstreamTotals } from "./counters.js";
import { openStream, type MeasurementRef, type StreamLink, type UpstreamDestination } from "./upstream-destination.js";

/** Bytes of points held for a stream being opened; beyond, points are dropped (counted). */
const MAX_OPENING_BYTES = 4 * 1024 * 1024;

/** A copy (a Buffer's own slice() would be a view, and payloads view read buffers that are reused). */
const copyOf = (b: Uint8Array): Uint8Array => Uint8Array.prototype.slice.call(b);

export class VolatileUpstream implements UpstreamDestination {
  readonly counters = { sentChunks: 0, droppedPoints: 0 };
  private up: ClientUpstream | undefined;
  private link: StreamLink | undefined;
  /** Points that came while the stream was being opened (bounded), sent once it is open. */
  private opening: { points: DataPoint[]; bytes: number } | undefined;
  private finished = false;

  constructor(
    private readonly meas: MeasurementRef,
    readonly settings: UpstreamSettings,
    /** send_queue_size: chunks sent and not yet acknowledged beyond which points are dropped (counted). */
    private readonly window: () => number = () => Infinity,
    private readonly totals: UpstreamTotals = { pointsSent: 0, chunksAcked: 0 },
  ) {}

  push(points: readonly DataPoint[]): void {
    const up = this.up;
    if (up !== undefined && up.unackedCount >= this.window()) {
      // A slow or stalled link: nothing is stored for persist: false, so drop rather than grow memory.
      this.counters.droppedPoints += points.length;
      return;
    }
    if (up === undefined) {
      const held = this.opening;
      if (held !== undefined && held.bytes < MAX_OPENING_BYTES) {
        // The stream is being opened (a measurement's first points): keep them for it, copied (views into read buffers).
        for (const p of points) {
          held.points.push({ ...p, payload: copyOf(p.payload) });
          held.bytes += p.payload.length;
        }
        return;
      }
      this.counters.droppedPoints += points.length;
      return;
    }
    try {
      let bytes = 0;
      for (const p of points) {
        up.write({ name: p.name, type: p.type }, [{ elapsedTime: p.elapsedNs, payload: copyOf(p.payload) }]);
        bytes += p.payload.length + p.name.length + p.type.length;
      }
      this.totals.pointsSent += points.length;
      if (this.settings.flush_policy === "immediately") this.counters.sentChunks += up.flush() > 0 ? 1 : 0;
      // The stream's state (connected, bitrate) counts what went to it, as for persist upstreams.
      this.link?.data(bytes);
    } catch {
      this.counters.droppedPoints += points.length;
    }
  }

  async attach(link: StreamLink): Promise<void> {
    if (this.finished) return;
    const interval = this.settings.flush_policy === "interval" ? this.settings.flush_interval : undefined;
    const held = (this.opening = { points: [], bytes: 0 });
    try {
      this.up = await openStream(link, this.meas, this.settings, interval);
      const totals = this.totals;
      this.up.onAck((results) => {
        for (const r of results) if (r.resultCode === 0) totals.chunksAcked++;
      });
      this.link = link;
    } finally {
      if (this.opening === held) this.opening = undefined;
      if (held.points.length > 0) this.push(held.points);
    }
  }

  async detach(): Promise<void> {
    this.up = undefined;
    this.link = undefined;
  }

  async finish(): Promise<void> {
    this.finished = true;
    const up = this.up;
    this.up = undefined;
    await up?.close({ closeSession: true }).catch(() => undefined);
  }

  busy(): boolean {
    return false;
  }

  setHold(): void {}
}
