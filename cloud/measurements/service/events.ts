// In-process `measurement_updated` events. Changes made through the API publish at once; data
// arriving on a measurement publishes at most once per window per measurement (leading and
// trailing edge), so a 1 kHz upstream does not become a 1 kHz event stream.
//
// A change that webhooks tell (create, name, description or base time, end, completion, delete) carries
// the state its transaction committed: read again later, a measurement completed and deleted at once would
// show only its deletion. Such a change publishes as soon as its transaction resolves, with no await between:
// the measurement's next writer, waiting for its lock, needs another round trip to the database to commit, so
// a measurement's events leave in the order its changes committed.
import { EventEmitter } from "node:events";
import { formatNs, nowNs } from "../formats/time.js";
import { basetimeNs, type MeasRow } from "./model.js";

/** A measurement as a change committed it: the fields webhook actions depend on, or its deletion. */
export type MeasurementState =
  | { deleted: true }
  | {
      deleted?: undefined;
      ended: boolean;
      completed: boolean;
      name: string;
      description: string;
      basetime: string;
      basetime_type: string;
      created_at: string;
    };

export const DELETED: MeasurementState = { deleted: true };

export const measurementState = (m: MeasRow | undefined): MeasurementState =>
  m === undefined
    ? DELETED
    : {
        ended: m.ended === 1,
        completed: m.status === "completed",
        name: m.name,
        description: m.description,
        basetime: formatNs(basetimeNs(m)),
        basetime_type: m.basetime_type,
        created_at: m.created_at,
      };

export interface MeasurementEvent {
  measUuid: string;
  projectUuid: string;
  occurredAtNs: bigint;
  /** What the change committed; absent for data arriving and for changes no webhook action depends on. */
  state?: MeasurementState;
}

export type MeasurementEventListener = (e: MeasurementEvent) => void;

export class MeasurementEvents {
  private readonly emitter = new EventEmitter();
  private readonly throttled = new Map<string, { lastAt: number; timer?: NodeJS.Timeout; projectUuid: string }>();

  constructor(readonly windowMs = 200) {
    this.emitter.setMaxListeners(0);
  }

  publish(measUuid: string, projectUuid: string, state?: MeasurementState): void {
    const t = this.throttled.get(measUuid);
    if (t) t.lastAt = Date.now();
    this.emitter.emit("measurement_updated", {
      measUuid,
      projectUuid,
      occurredAtNs: nowNs(),
      ...(state ? { state } : {}),
    } satisfies MeasurementEvent);
  }

  /** Data arriving: at once with the state it committed when it changed the status, otherwise throttled. */
  publishData(measUuid: string, projectUuid: string, state: MeasurementState | undefined): void {
    if (state) this.publish(measUuid, projectUuid, state);
    else this.publishThrottled(measUuid, projectUuid);
  }

  /** For data arrival: publishes now if the window has passed, otherwise once at its end. */
  publishThrottled(measUuid: string, projectUuid: string): void {
    const now = Date.now();
    let t = this.throttled.get(measUuid);
    if (!t) {
      t = { lastAt: 0, projectUuid };
      this.throttled.set(measUuid, t);
    }
    if (t.timer) return;
    const wait = t.lastAt + this.windowMs - now;
    if (wait <= 0) {
      this.publish(measUuid, projectUuid);
      return;
    }
    t.timer = setTimeout(() => {
      t!.timer = undefined;
      this.publish(measUuid, t!.projectUuid);
      // Forget measurements that went quiet so the map does not grow without bound.
      setTimeout(() => {
        const cur = this.throttled.get(measUuid);
        if (cur && !cur.timer && Date.now() - cur.lastAt >= this.windowMs) this.throttled.delete(measUuid);
      }, this.windowMs).unref();
    }, wait);
    t.timer.unref();
  }

  subscribe(listener: MeasurementEventListener): () => void {
    this.emitter.on("measurement_updated", listener);
    return () => this.emitter.off("measurement_updated", listener);
  }

  /** Long-lived subscribers (HTTP streams) register here to be ended at shutdown. */
  onShutdown(fn: () => void): () => void {
    this.emitter.on("shutdown", fn);
    return () => this.emitter.off("shutdown", fn);
  }

  /** Ends the HTTP subscriber streams, so the server's close is not held up by them. */
  shutdownSubscribers(): void {
    this.emitter.emit("shutdown");
  }

  get listenerCount(): number {
    return this.emitter.listenerCount("measurement_updated");
  }

  close(): void {
    for (const t of this.throttled.values()) if (t.timer) clearTimeout(t.timer);
    this.throttled.clear();
    this.emitter.removeAllListeners();
  }
}
