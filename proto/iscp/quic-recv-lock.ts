// @matrixai/quic takes a Lock (@matrixai/async-locks) around every UDP packet it receives, to keep each
// recv and its send together. That Lock's withF builds a timed cancellable per call: an AbortController, a
// timer and an error object with a captured stack. Profiled at 1 KiB points, this was most of QUIC's CPU
// time on both ends (~85 % of a core each for ~1.5 MB/s). This swaps a connection's recvLock for a
// promise chain with the same mutual exclusion. It reaches into the library's internals (`recvLock`);
// should they change, nothing is swapped.

interface RecvLock {
  isLocked(): boolean;
  waitForUnlock(): PromiseLike<void>;
  withF<T>(f: () => Promise<T>): Promise<T>;
}

export function lightenRecvLock(connection: object): void {
  const c = connection as { recvLock?: Partial<RecvLock> };
  const old = c.recvLock;
  if (!old || typeof old.withF !== "function" || typeof old.isLocked !== "function" || typeof old.waitForUnlock !== "function") return;
  let tail: Promise<unknown> = Promise.resolve();
  const withF = <T>(...args: unknown[]): Promise<T> => {
    const f = args[args.length - 1] as () => Promise<T>;
    const run = tail.then(async () => {
      // Receives that began under the old lock finish first (none begin there any more).
      while (old.isLocked!()) await old.waitForUnlock!();
      return f();
    });
    tail = run.catch(() => undefined);
    return run;
  };
  c.recvLock = { isLocked: () => false, waitForUnlock: () => tail.then(() => undefined), withF } as unknown as RecvLock;
}
