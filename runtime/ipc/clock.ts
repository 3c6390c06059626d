// Taking a measurement's base time: the system clock (edge_rtc, epoch ns) and the monotonic clock reading
// at the same instant. Upstream FIFO timestamps are monotonic readings; elapsed = reading - clockBase.
import type { ClockBase } from "./codec.js";

export interface MeasurementClock {
  /** Base time, nanoseconds since the Unix epoch (system clock). */
  baseTimeNs: bigint;
  /** CLOCK_MONOTONIC reading at the base time (what process.hrtime() and the connectors read). */
  clockBase: ClockBase;
}

export function takeMeasurementClock(): MeasurementClock {
  const [sec, nsec] = process.hrtime();
  const epochNs = BigInt(Date.now()) * 1_000_000n;
  // Date.now() has ms resolution: add the sub-ms part of the monotonic reading so base times differ per call.
  return { baseTimeNs: epochNs + BigInt(nsec % 1_000_000), clockBase: { sec, nsec } };
}
