// Latency samples (ms) and their percentiles, kept in a growing Float64Array (no object per sample).
export class LatencySamples {
  private buf = new Float64Array(1 << 14);
  private n = 0;

  add(ms: number): void {
    if (this.n === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  summary(): LatencySummary {
    const s = this.buf.slice(0, this.n).sort();
    const at = (q: number) => (this.n === 0 ? NaN : s[Math.min(this.n - 1, Math.floor(q * this.n))]!);
    return { samples: this.n, p50Ms: round(at(0.5)), p99Ms: round(at(0.99)), maxMs: round(at(1)) };
  }
}

export interface LatencySummary {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const round = (v: number) => (Number.isFinite(v) ? +v.toFixed(2) : v);

/** CLOCK_MONOTONIC now, in ns (what the sample connector's --stamp writes). */
export const monoNs = () => Number(process.hrtime.bigint());

/** The --stamp write time of a payload (bytes 8..16, u64 BE ns), or undefined when it has none. */
export function stampOf(payload: Uint8Array): number | undefined {
  if (payload.length < 16) return undefined;
  const v = new DataView(payload.buffer, payload.byteOffset + 8, 8);
  return v.getUint32(0) * 4294967296 + v.getUint32(4);
}

/** The sequence number at the start of a payload (u64 BE), or undefined. */
export function seqOf(payload: Uint8Array): number | undefined {
  if (payload.length < 8) return undefined;
  const v = new DataView(payload.buffer, payload.byteOffset, 8);
  return v.getUint32(0) * 4294967296 + v.getUint32(4);
}
