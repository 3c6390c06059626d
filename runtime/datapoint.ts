// The in-memory data point used across the agent's data path (FIFO reader -> filters -> queue -> iSCP,
// and iSCP -> filters -> FIFO writer). Points travel in arrays (one array per FIFO read or per received
// chunk), so every stage works on a batch and per-point work stays a few field reads.

/**
 * One data point.
 *
 * `elapsedNs` is the elapsed time from the measurement's base time in nanoseconds, as a JS number
 * (not bigint): exact up to 2^53 ns (about 104 days of measurement), and no bigint allocation per point.
 * Beyond that it loses sub-microsecond precision, never ordering. Negative values are allowed
 * (a device clock reading taken before the base time).
 */
export interface DataPoint {
  /** iSCP data name, e.g. `1/gnss` (upstream: after the IPC `data_name_prefix` was added). */
  name: string;
  /** iSCP data type, e.g. `float64`, `h264_frame/idr_frame`. */
  type: string;
  /** Payload bytes; may be a view into a larger read buffer: copy before keeping it past the batch. */
  payload: Uint8Array;
  /** Elapsed time from the measurement base time, nanoseconds. */
  elapsedNs: number;
  /** Source id: upstream, the device-connector IPC id; downstream, the source edge UUID. */
  srcId: string;
}

/** Data id key used for per-data-id state (sampling, grouping): type and name joined by `:` (iSCP text form). */
export function dataIdKey(p: Pick<DataPoint, "type" | "name">): string {
  return p.type + ":" + p.name;
}
