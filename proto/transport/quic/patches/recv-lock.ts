// @matrixai/quic takes a Lock (@matrixai/async-locks) around every UDP packet it receives, to keep each
// recv and its send together. That Lock's withF builds a timed cancellable per call: an AbortController, a
// timer and an error object with a captured stack. Profiled at 1 KiB points, this was most of QUIC's CPU
// time on both ends. This swaps a connection's recvLock for a
// promise chain. It reaches into the library's internals (`recvLock`); should they change, nothing is swapped.
//
// Receives start one after another in arrival order, each once the previous one has handed its packet to
// quiche (the synchronous start of the library's receive: quiche's recv, then the stream walk), but none waits
// for the previous one's drain. Holding the lock over the drain, now coalesced to one per event-loop turn
// (send-batch.ts), let one packet through per turn: the receiver then answered every data packet with an
// ACK of its own, which the sender had to process in turn. Packets already queued on the socket now share a turn
// and a drain, as quiche expects (receive all that is there, then send).

interface RecvLock {
  isLocked(): boolean;
  waitForUnlock(): PromiseLike<void>;
  withF<T>(f: () => Promise<T>): Promise<T>;
}

/** Swaps `connection`'s receive lock; false when the internals are not as expected. */
export function lightenRecvLock(connection: object): boolean {
  const c = connection as { recvLock?: Partial<RecvLock> };
  const old = c.recvLock;
  if (
    !old ||
    typeof old.withF !== "function" ||
    typeof old.isLocked !== "function" ||
    typeof old.waitForUnlock !== "function"
  )
    return false;
  let pending = 0;
  let idle: Promise<void> = Promise.resolve();
  let settleIdle: (() => void) | undefined;
  // Resolves once the receives begun before it have started (and so handed their packets over).
  let tail: Promise<unknown> = Promise.resolve();
  const withF = <T>(...args: unknown[]): Promise<T> => {
    const f = args[args.length - 1] as () => Promise<T>;
    if (pending++ === 0) idle = new Promise<void>((r) => (settleIdle = r));
    const turn = tail.then(async () => {
      // Receives that began under the old lock finish first (none begin there any more).
      while (old.isLocked!()) await old.waitForUnlock!();
    });
    // f is called in the reaction registered first on `turn`, before the next receive's, so starts keep order.
    const run = turn.then(() => f());
    tail = turn.catch(() => undefined);
    const done = () => {
      if (--pending === 0) settleIdle?.();
    };
    run.then(done, done);
    return run;
  };
  c.recvLock = { isLocked: () => pending > 0, waitForUnlock: () => idle, withF } as unknown as RecvLock;
  return true;
}
