// In-process `measurement_updated` events. Changes made through the API publish at once; data
// arriving on a measurement publishes at most once per window per measurement (leading and
// trailing edge), so a 1 kHz upstream does not become a 1 kHz event stream.
import { EventEmitter } from "node:events";
import { nowNs } from "../formats/time.js";

export interface MeasurementEvent {
  measUuid: string;
  projectUuid: string;
  occurredAtNs: bigint;
}

export type MeasurementEventListener = (e: MeasurementEvent) => void;

export class MeasurementEvents {
  private readonly emitter = new EventEmitter();
  private readonly throttled = new Map<string, { lastAt: number; timer?: NodeJS.Timeout; projectUuid: string }>();

  constructor(readonly windowMs = 200) {
    this.emitter.setMaxListeners(0);
  }

  publish(measUuid: string, projectUuid: string): void {
    const t = this.throttled.get(measUuid);
    if (t) t.lastAt = Date.now();
    this.emitter.emit("measurement_updated", {
      measUuid,
      projectUuid,
      occurredAtNs: nowNs(),
    } satisfies MeasurementEvent);
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
