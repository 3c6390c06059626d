// The chaos soak's options: which rows (transport × backend), how long each runs, at which load, and the fault
// schedule's rhythm.
import { arg } from "../lib.js";

export type Transport = "websocket" | "quic";
export type Backend = "sqlite" | "postgres";

export interface RowSpec {
  transport: Transport;
  backend: Backend;
}

export interface SoakOptions {
  rows: RowSpec[];
  /** Seconds each row runs under load. */
  durationS: number;
  /** Points/s the connector writes; undefined: half the maximum, measured first. */
  rate?: number;
  /** Seconds of a process's life left out of its RSS and descriptor slopes. */
  warmupS: number;
  /** Seconds after a fault's end (and before the first) before the next one begins: its recovery, watched. */
  recoverS: number;
  /** Seconds a fault lasts (an outage's length). */
  holdS: number;
  /** Seconds between two samples of every process's RSS and descriptors. */
  sampleS: number;
  /** Seconds the last points may take to reach the cloud once the connector stopped. */
  drainS: number;
  /** Only these faults (by name), when given. */
  faults?: string[];
  /** The slopes' target is judged only on runs at least this long (shorter ones report them). */
  judgeSlopesFromS: number;
}

function num(name: string, fallback: number): number {
  const v = arg(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} takes a positive number, not "${v}"`);
  return n;
}

function pick<T extends string>(name: string, all: readonly T[], fallback: T): T[] {
  const v = arg(name) ?? fallback;
  if (v === "both") return [...all];
  if (!(all as readonly string[]).includes(v)) throw new Error(`--${name} takes ${all.join(", ")} or both, not "${v}"`);
  return [v as T];
}

export function options(argv = process.argv): SoakOptions {
  const matrix = argv.includes("--matrix");
  const transports = matrix
    ? (["websocket", "quic"] as Transport[])
    : pick("transport", ["websocket", "quic"], "websocket");
  const backends = matrix ? (["sqlite", "postgres"] as Backend[]) : pick("backend", ["sqlite", "postgres"], "sqlite");
  const rate = arg("rate");
  return {
    rows: backends.flatMap((backend) => transports.map((transport) => ({ transport, backend }))),
    durationS: num("duration", 3600),
    rate: rate === undefined ? undefined : num("rate", 1000),
    warmupS: num("warmup", 120),
    recoverS: num("recover", 15),
    holdS: num("hold", 5),
    sampleS: num("sample", 5),
    drainS: num("drain", 120),
    judgeSlopesFromS: num("judge-slopes-from", 1800),
    faults: arg("faults")?.split(","),
  };
}

export const rowName = (r: RowSpec) => `${r.transport}/${r.backend}`;
