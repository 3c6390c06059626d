// @matrixai/quic drains a connection into UDP packets (its `send()`: quiche's send until Done, then the idle timer
// and the peer's error are read) after every packet received, every 4 KiB read from a stream and every stream
// write: several drains per packet at loopback rates, most of them finding a packet only partly filled or
// nothing to send, each costing several calls into the native binding. This coalesces them: the calls made
// within one turn of the event loop share one drain, run once the I/O phase has handed over every datagram and
// stream event already there (setImmediate), so packets leave full. Callers still await the drain that covers
// their call, and see its failure. Before a close, flushSends() drains at once: the library's
// own drains ran synchronously with each write, so closing right after a write used to send it first. It reaches
// into the library's internals (the connection's `send`); should they change, nothing is swapped.

const drains = new WeakMap<object, () => Promise<void>>();

/** The library's own drain, run now; a drain of a connection that has stopped has nothing to send. */
function drainNow(connection: object, drain: () => Promise<void>): Promise<void> {
  try {
    return drain.call(connection).catch(ignoreStopped);
  } catch (e) {
    return ignoreStopped(e);
  }
}

/** The library refuses a drain once the connection stopped (its `@ready` guard): a deferred one may come after. */
async function ignoreStopped(e: unknown): Promise<void> {
  if ((e as { name?: string } | undefined)?.name !== "ErrorQUICConnectionNotRunning") throw e;
}

/** Coalesces `connection`'s drains; false when the internals are not as expected. */
export function coalesceSends(connection: object): boolean {
  const c = connection as { send?: () => Promise<void> };
  const drain = c.send;
  if (typeof drain !== "function") return false;
  drains.set(connection, drain);
  let scheduled: Promise<void> | undefined;
  c.send = () => {
    scheduled ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        // Calls from here on (during the drain) get a drain of their own.
        scheduled = undefined;
        drainNow(connection, drain).then(resolve, reject);
      });
    });
    return scheduled;
  };
  return true;
}

/**
 * Sends what the connection holds now, without waiting for the turn to end. Call it before closing: quiche drops
 * stream data it still holds once the connection closes (a Disconnect written just before would be lost).
 */
export function flushSends(connection: object): Promise<void> {
  const drain = drains.get(connection);
  return drain ? drainNow(connection, drain) : Promise.resolve();
}
