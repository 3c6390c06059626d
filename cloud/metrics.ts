// Prometheus metrics of one cloud peer: a registry of its own (tests run several peers in one process, so
// prom-client's global registry is never used), the default process metrics, and the peer's own. Counters on
// busy paths are bumped once per request or per committed batch, never per data point. Gauges read live
// state at scrape time through `collect` callbacks (`setSources`), so nothing runs between scrapes.
import fsp from "node:fs/promises";
import path from "node:path";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

export interface StorageFigures {
  databaseBytes: number;
  payloadBytes: number;
  freeBytes?: number;
}

/** Live state the gauges read when scraped; parts not running (no broker in a test peer) are left out. */
export interface MetricSources {
  iscp?: () => { connections: Array<{ transport: string }>; upstreams: number; downstreams: number } | undefined;
  storage?: () => Promise<StorageFigures>;
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** Route label of requests no route took (404, 405): raw paths would make a series per URL. */
export const UNMATCHED = "unmatched";

export class CloudMetrics {
  readonly registry = new Registry();
  private sources: MetricSources = {};
  private readonly httpRequests: Counter<"method" | "route" | "status">;
  private readonly httpDuration: Histogram<"method" | "route" | "status">;
  private readonly tokens: Counter<"grant_type">;
  private readonly accessChecks: Counter<"result">;
  private readonly points: Counter;
  private readonly chunks: Counter;
  private readonly commitSeconds: Histogram;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: "cloud_http_requests_total",
      help: "HTTP requests answered, by method, route template and status",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.httpDuration = new Histogram({
      name: "cloud_http_request_duration_seconds",
      help: "Time from request to the end of the answer",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.tokens = new Counter({
      name: "cloud_tokens_issued_total",
      help: "Access tokens issued by the token endpoint, by grant type",
      labelNames: ["grant_type"],
      registers,
    });
    this.accessChecks = new Counter({
      name: "cloud_access_checks_total",
      help: "Access decisions (REST guard and iSCP project checks), by result",
      labelNames: ["result"],
      registers,
    });
    this.points = new Counter({
      name: "cloud_points_stored_total",
      help: "Data points of newly stored chunks (REST uploads and iSCP upstreams)",
      registers,
    });
    this.chunks = new Counter({
      name: "cloud_chunks_stored_total",
      help: "Newly stored chunks (REST uploads and iSCP upstreams)",
      registers,
    });
    this.commitSeconds = new Histogram({
      name: "cloud_storage_commit_seconds",
      help: "Time to write and commit one batch of chunks",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    const sources = () => this.sources;
    new Gauge({
      name: "cloud_iscp_connections",
      help: "Open iSCP connections, by transport",
      labelNames: ["transport"],
      registers,
      collect() {
        const s = sources().iscp?.();
        const by: Record<string, number> = { websocket: 0, quic: 0 };
        for (const c of s?.connections ?? []) by[c.transport] = (by[c.transport] ?? 0) + 1;
        for (const [transport, n] of Object.entries(by)) this.set({ transport }, n);
      },
    });
    new Gauge({
      name: "cloud_iscp_streams",
      help: "iSCP streams the broker holds (also those waiting for a resume), by direction",
      labelNames: ["direction"],
      registers,
      collect() {
        const s = sources().iscp?.();
        this.set({ direction: "upstream" }, s?.upstreams ?? 0);
        this.set({ direction: "downstream" }, s?.downstreams ?? 0);
      },
    });
    // The storage gauges are collected in one scrape: the directory walk runs once for them. A database that
    // cannot be reached leaves the byte gauges out of the scrape and marks cloud_database_up 0; the rest is served.
    let pending: Promise<StorageFigures | undefined> | undefined;
    const storageNow = (): Promise<StorageFigures | undefined> =>
      (pending ??= (sources().storage?.() ?? Promise.resolve({ databaseBytes: 0, payloadBytes: 0 }))
        .catch(() => undefined)
        .finally(() => setImmediate(() => (pending = undefined))));
    new Gauge({
      name: "cloud_database_up",
      help: "1 when the database answered this scrape's storage query, 0 when it could not be reached",
      registers,
      async collect() {
        this.set((await storageNow()) ? 1 : 0);
      },
    });
    new Gauge({
      name: "cloud_storage_bytes",
      help: "Bytes the peer's data takes on disk, by part (database: SQLite file, WAL and shared memory; payload_files: chunk payload files)",
      labelNames: ["part"],
      registers,
      async collect() {
        const s = await storageNow();
        this.reset();
        if (!s) return;
        this.set({ part: "database" }, s.databaseBytes);
        this.set({ part: "payload_files" }, s.payloadBytes);
      },
    });
    new Gauge({
      name: "cloud_storage_free_bytes",
      help: "Bytes free for unprivileged writers on the data directory's file system",
      registers,
      async collect() {
        const s = await storageNow();
        this.reset();
        if (s?.freeBytes !== undefined) this.set(s.freeBytes);
      },
    });
  }

  setSources(s: MetricSources): void {
    this.sources = { ...this.sources, ...s };
  }

  /** One answered HTTP request; `route` is the OpenAPI path template (or UNMATCHED). */
  request(method: string, route: string, status: number, seconds: number): void {
    const labels = { method: METHODS.has(method) ? method : "other", route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  tokenIssued(grantType: string): void {
    this.tokens.inc({ grant_type: grantType });
  }

  accessChecked(allowed: boolean): void {
    this.accessChecks.inc({ result: allowed ? "allowed" : "denied" });
  }

  /** A committed batch of chunks. */
  stored(chunks: number, points: number, seconds: number): void {
    this.chunks.inc(chunks);
    this.points.inc(points);
    this.commitSeconds.observe(seconds);
  }

  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** Sizes of the database files and of the payload files under `dataDir` (a stat per file, at scrape time). */
export async function storageBytes(dataDir: string): Promise<StorageFigures> {
  const size = (f: string) =>
    fsp.stat(f).then(
      (s) => s.size,
      () => 0,
    );
  const db = await Promise.all(["cloud.db", "cloud.db-wal", "cloud.db-shm"].map((f) => size(path.join(dataDir, f))));
  const chunkDir = path.join(dataDir, "chunks");
  const names = await fsp.readdir(chunkDir).catch(() => [] as string[]);
  const payload = await Promise.all(names.map((n) => size(path.join(chunkDir, n))));
  return { databaseBytes: db.reduce((a, b) => a + b, 0), payloadBytes: payload.reduce((a, b) => a + b, 0) };
}
