// The area's records and their JSON shapes (intdash REST API models Measurement, MeasBaseTime,
// MeasurementSequenceGroup), plus the measurement status rules.
import { formatNs } from "../formats/time.js";

export const DEFAULT_PROJECT = "00000000-0000-0000-0000-000000000000";

/**
 * The lock of a measurement's writes (TxOptions.locks): its row, base times, sequences, chunks and data ids are
 * its own, so on PostgreSQL writes to different measurements (several edges' ingest) run side by side.
 */
export const measurementLock = (uuid: string): { locks: string[] } => ({ locks: [`meas:${uuid.toLowerCase()}`] });

export const BASETIME_TYPES = ["edge_rtc", "ntp", "gps", "api_first_received", "volatile", "manual"] as const;
export type BaseTimeType = (typeof BASETIME_TYPES)[number];
export const isBaseTimeType = (s: string): s is BaseTimeType => (BASETIME_TYPES as readonly string[]).includes(s);

/** Priorities for base times created without one (the spec gives edge_rtc 20 and ntp 40 by example). */
export const DEFAULT_PRIORITY: Record<string, number> = {
  volatile: 5,
  api_first_received: 10,
  edge_rtc: 20,
  ntp: 40,
  gps: 60,
  manual: 80,
  undefined: 0,
};

/** A base time's type follows its name when the name is a type; other names are `manual`. */
export const typeOfName = (name: string): BaseTimeType => (isBaseTimeType(name) ? name : "manual");

export type Status = "ready" | "measuring" | "resending" | "completed";

export interface MeasRow {
  uuid: string;
  project_uuid: string;
  name: string;
  description: string;
  edge_uuid: string;
  protected: number;
  ended: number;
  completed: number;
  status: Status;
  basetime_id: number | null;
  basetime_type: string;
  basetime_s: number;
  basetime_nanos: number;
  max_elapsed_ns: number;
  created_at: string;
  updated_at: string;
}

/** Sequence totals of one measurement (SQL aggregates; NULL sums when nothing is expected). */
export interface MeasTotals {
  seq_count: number;
  recv_points: number;
  recv_chunks: number;
  expected_points: number | null;
  expected_chunks: number | null;
  counted_chunks: number | null;
  unsatisfied: number;
}

export interface BaseTimeRow {
  id: number;
  measurement_uuid: string;
  type: string;
  name: string;
  priority: number;
  basetime_s: number;
  basetime_nanos: number;
  elapsed_time_ns: number;
  created_at: string;
  updated_at: string;
}

export interface SequenceRow {
  id: number;
  measurement_uuid: string;
  uuid: string;
  expected_data_points: number | null;
  final_sequence_number: number | null;
  received_data_points: number;
  received_chunks_count: number;
  created_at: string;
  updated_at: string;
}

export const basetimeNs = (r: { basetime_s: number; basetime_nanos: number }) =>
  BigInt(r.basetime_s) * 1_000_000_000n + BigInt(r.basetime_nanos);

export function splitNs(ns: bigint): { s: number; nanos: number } {
  const s = ns >= 0n ? ns / 1_000_000_000n : -((-ns + 999_999_999n) / 1_000_000_000n);
  return { s: Number(s), nanos: Number(ns - s * 1_000_000_000n) };
}

/**
 * ready: nothing received, not ended. measuring: data arrived, not ended. Once ended it is
 * completed when every sequence got what it expects (its data points or its final sequence
 * number), otherwise resending. `complete` forces completed.
 */
export function statusOf(
  m: Pick<MeasRow, "ended" | "completed">,
  t: Pick<MeasTotals, "recv_chunks" | "unsatisfied">,
): Status {
  if (m.completed) return "completed";
  if (m.ended) return t.unsatisfied === 0 ? "completed" : "resending";
  return t.recv_chunks > 0 ? "measuring" : "ready";
}

/** The deprecated top-level `status` only knows measuring, resending and finished. */
export const legacyStatus = (s: Status) =>
  s === "completed" ? "finished" : s === "resending" ? "resending" : "measuring";

function chunksRatio(m: MeasRow, t: MeasTotals): number {
  if (m.status === "completed") return 1;
  if (!t.expected_chunks) return 0;
  return Math.min(1, (t.counted_chunks ?? 0) / t.expected_chunks);
}

export function renderMeasurement(m: MeasRow, t: MeasTotals) {
  const maxElapsedUs = Math.max(0, Math.floor(m.max_elapsed_ns / 1000));
  const ratio = chunksRatio(m, t);
  return {
    uuid: m.uuid,
    name: m.name,
    description: m.description,
    basetime: formatNs(basetimeNs(m)),
    basetime_type: m.basetime_type,
    ...(m.basetime_id !== null ? { max_priority_basetime_id: m.basetime_id } : {}),
    edge_uuid: m.edge_uuid,
    duration: maxElapsedUs,
    max_elapsed_time: maxElapsedUs,
    completed: m.status === "completed",
    protected: m.protected === 1,
    sequences: {
      received_chunks_ratio: ratio,
      received_data_points: t.recv_points,
      ...(t.expected_points !== null ? { expected_data_points: t.expected_points } : {}),
      status: m.status,
    },
    markers: [],
    created_at: m.created_at,
    updated_at: m.updated_at,
    processed_ratio: ratio,
    ended: m.ended === 1,
    status: legacyStatus(m.status),
    received_data_points: t.recv_points,
  };
}

export const renderBaseTime = (b: BaseTimeRow) => ({
  id: b.id,
  type: b.type,
  basetime: formatNs(basetimeNs(b)),
  priority: b.priority,
  name: b.name,
  elapsed_time: b.elapsed_time_ns,
  created_at: b.created_at,
  updated_at: b.updated_at,
});

export const renderSequence = (s: SequenceRow) => ({
  uuid: s.uuid,
  ...(s.expected_data_points !== null ? { expected_data_points: s.expected_data_points } : {}),
  received_data_points: s.received_data_points,
  received_chunks_count: s.received_chunks_count,
  ...(s.final_sequence_number !== null ? { final_sequence_number: s.final_sequence_number } : {}),
  created_at: s.created_at,
  updated_at: s.updated_at,
});
