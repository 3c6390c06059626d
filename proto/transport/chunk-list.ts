// A list of received chunks read from the front: the one copy loop both stream reassemblers share.

/**
 * Fills `dst` from the front of `chunks`, removing what it took (a chunk taken in part stays as its rest).
 * `chunks` must hold at least `dst.length` bytes.
 */
export function takeFront<T extends Uint8Array>(chunks: T[], dst: Uint8Array): void {
  const n = dst.length;
  let at = 0;
  while (at < n) {
    const c = chunks[0]!;
    const k = Math.min(c.length, n - at);
    dst.set(k === c.length ? c : c.subarray(0, k), at);
    at += k;
    if (k === c.length) chunks.shift();
    else chunks[0] = c.subarray(k) as T;
  }
}
