// Openers report bytes through Callbacks.data(); a timer batches them before they reach a machine.
// This lives in runtime/ (not machines/) because it runs real timers.
import type { Callbacks } from "../machines/link.js";

/** Bytes moved are reported to a machine at most this often. */
const DATA_EVENT_MS = 100;

/**
 * The same callbacks, but data() reaches the machine at most every 100 ms with the bytes summed (the
 * first bytes after a quiet spell at once): traffic is judged per second, and a FIFO read or a chunk
 * every few microseconds must not each be a machine event. `stop()` ends the pending report.
 */
export function throttledData<C extends Pick<Callbacks, "data">>(cb: C, everyMs = DATA_EVENT_MS): C & { stop(): void } {
  let pending = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (pending === 0) return;
    const bytes = pending;
    pending = 0;
    cb.data(bytes);
    timer = setTimeout(flush, everyMs);
  };
  const data = (bytes: number) => {
    if (timer !== undefined) {
      pending += bytes;
      return;
    }
    cb.data(bytes);
    timer = setTimeout(flush, everyMs);
  };
  return Object.assign(Object.create(null) as object, cb, { data, stop: () => clearTimeout(timer) }) as C & {
    stop(): void;
  };
}
