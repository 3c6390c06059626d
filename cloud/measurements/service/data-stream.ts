// GET .../data: a measurement's points in time order, streamed. Chunk rows (a row may be a pack of chunks) are
// read in order of their earliest (asc) or latest (desc) point, in pages (chunk-pages.ts: every chunk once while
// compactions run); each chunk's matching points become a sorted run,
// and a heap of runs releases a point once no chunk still to be read can hold an earlier (later)
// one. Memory stays at the chunks that overlap in time.
import type { Queryable } from "../../database/db.js";
import { decodeChunk } from "../formats/codec.js";
import { dataFrame, jsonLine, type GroupCtx } from "../formats/data-format.js";
import { basetimeNs, type MeasRow } from "./model.js";
import type { PayloadFiles, PayloadRef } from "../storage/payload-files.js";
import type { ChunkRow } from "../repo/data.js";
import { chunkPages } from "./chunk-pages.js";
import { measurementsForName } from "../repo/measurement-list.js";
import { jsonTime, type TimeFormat } from "../formats/time.js";
import { bothMatch, compileDataIdFilter, compileIdq, type DataIdMatch } from "./data-id-filter.js";

export interface DataQuery {
  project: string;
  name: string;
  idq?: readonly string[];
  /** `<type>:<name>` entries with iSCP wildcards (data-id-filter.ts); with idq[], a point must pass both. */
  dataIdFilter?: readonly string[];
  startNs?: bigint;
  endNs?: bigint;
  since?: string;
  limit?: number;
  desc: boolean;
  timeFormat: TimeFormat;
  format: "json" | "protobuf";
  exitOnError: boolean;
}

interface Item {
  elapsed: bigint;
  payload: Uint8Array;
  group: GroupCtx;
}

/** The matching points of one chunk, sorted; `i` is the next one to release. */
interface Run {
  items: Item[];
  i: number;
}

const PAGE = 128;
const FLUSH_BYTES = 64 * 1024;
const SAFE = 9007199254740991n;
const clampNum = (n: bigint) => Number(n > SAFE ? SAFE : n < -SAFE ? -SAFE : n);

/** A heap of runs ordered by their next point; runs are created in read order, which breaks ties. */
class RunHeap {
  private readonly a: Array<Run & { seq: number }> = [];
  private seq = 0;
  constructor(private readonly desc: boolean) {}
  get size() {
    return this.a.length;
  }
  private before(x: Run & { seq: number }, y: Run & { seq: number }): boolean {
    const ex = x.items[x.i]!.elapsed;
    const ey = y.items[y.i]!.elapsed;
    if (ex !== ey) return this.desc ? ex > ey : ex < ey;
    return x.seq < y.seq;
  }
  head(): Item | undefined {
    const r = this.a[0];
    return r && r.items[r.i];
  }
  add(items: Item[]): void {
    if (items.length === 0) return;
    this.a.push({ items, i: 0, seq: this.seq++ });
    this.up(this.a.length - 1);
  }
  /** Removes and returns the next point. */
  take(): Item {
    const r = this.a[0]!;
    const it = r.items[r.i++]!;
    if (r.i === r.items.length) {
      const last = this.a.pop()!;
      if (this.a.length) this.a[0] = last;
    }
    this.down(0);
    return it;
  }
  private up(i: number): void {
    const a = this.a;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  private down(i: number): void {
    const a = this.a;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.before(a[l]!, a[m]!)) m = l;
      if (r < a.length && this.before(a[r]!, a[m]!)) m = r;
      if (m === i) return;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
  }
}

/** A stored chunk that could not be decoded, in its place in the output. */
interface Damaged {
  error: string;
}

/**
 * The points of one measurement in order within [from, to) of elapsed time, in batches. A chunk
 * that cannot be decoded becomes a Damaged entry after the points that precede it; with
 * exit_on_error nothing follows it.
 */
async function* measurementPoints(
  src: ChunkSource,
  m: MeasRow,
  qy: DataQuery,
  match: DataIdMatch | undefined,
  log: Log,
): AsyncGenerator<Array<Item | Damaged>> {
  const base = basetimeNs(m);
  const from = qy.startNs !== undefined ? qy.startNs - base : undefined;
  const to = qy.endNs !== undefined ? qy.endNs - base : undefined;
  const heap = new RunHeap(qy.desc);
  const pages = chunkPages(src.db, {
    measUuid: m.uuid,
    desc: qy.desc,
    from: from !== undefined ? clampNum(from) : undefined,
    to: to !== undefined ? clampNum(to) : undefined,
    limit: PAGE,
  });
  for await (const rows of pages) {
    const payloads = await payloadsOf(
      src.files,
      rows.flatMap((r) => r.chunks),
    );
    let k = 0;
    const out: Array<Item | Damaged> = [];
    for (const row of rows) {
      // A pack's bound is that of its earliest (latest) chunk: its chunks are added together after it.
      const bound = BigInt(row.bound);
      // No chunk from here on holds a point before (after) `bound`: release what precedes it.
      for (let h = heap.head(); h && (qy.desc ? h.elapsed > bound : h.elapsed < bound); h = heap.head())
        out.push(heap.take());
      for (const c of row.chunks) {
        const items = chunkItems(c, payloads[k++]!, m, qy, match, from, to, log);
        if ("error" in items) {
          out.push(items);
          if (qy.exitOnError) {
            yield out;
            return;
          }
          continue;
        }
        heap.add(items);
      }
    }
    if (out.length) yield out;
  }
  const rest: Item[] = [];
  while (heap.size) rest.push(heap.take());
  if (rest.length) yield rest;
}

/** A chunk's matching points, sorted in the order read (a Damaged entry when it cannot be decoded). */
function chunkItems(
  row: ChunkRow,
  payload: PromiseSettledResult<Buffer>,
  m: MeasRow,
  qy: DataQuery,
  match: DataIdMatch | undefined,
  from: bigint | undefined,
  to: bigint | undefined,
  log: Log,
): Item[] | Damaged {
  let chunk;
  try {
    if (payload.status === "rejected") throw payload.reason;
    chunk = decodeChunk(payload.value);
  } catch (err) {
    log.warn(
      { err: (err as Error).message, measurement: m.uuid, sequence_number: row.sequence_number },
      "stored chunk could not be decoded",
    );
    return { error: `a stored chunk could not be decoded: ${(err as Error).message}` };
  }
  const items: Item[] = [];
  for (const g of chunk.groups) {
    if (match && !match(g.type, g.name)) continue;
    const group: GroupCtx = { measUuid: m.uuid, type: g.type, name: g.name, createdAtMs: row.created_at_ms };
    for (const p of g.points) {
      if (from !== undefined && p.elapsedNs < from) continue;
      if (to !== undefined && p.elapsedNs >= to) continue;
      items.push({ elapsed: p.elapsedNs, payload: p.payload, group });
    }
  }
  // Stable: equal times keep group and point order.
  items.sort(
    qy.desc
      ? (x, y) => (x.elapsed > y.elapsed ? -1 : x.elapsed < y.elapsed ? 1 : 0)
      : (x, y) => (x.elapsed < y.elapsed ? -1 : x.elapsed > y.elapsed ? 1 : 0),
  );
  if (qy.desc) stableReverseTies(items);
  return items;
}

/** Each row's payload: held in the row (written before payload files), or read from its sequence's file. */
export async function payloadsOf(
  files: PayloadFiles,
  rows: readonly ChunkRow[],
): Promise<Array<PromiseSettledResult<Buffer>>> {
  const inFiles = rows.filter((r): r is ChunkRow & PayloadRef => r.file_length !== null);
  const read = inFiles.length > 0 ? await files.read(inFiles) : [];
  let i = 0;
  return rows.map((r) => (r.file_length !== null ? read[i++]! : { status: "fulfilled", value: r.payload }));
}

/** In descending order, points with equal times come in reverse of their stored order. */
function stableReverseTies(items: Item[]): void {
  for (let i = 0; i < items.length; ) {
    let j = i + 1;
    while (j < items.length && items[j]!.elapsed === items[i]!.elapsed) j++;
    if (j - i > 1) {
      const tie = items.slice(i, j).reverse();
      for (let k = 0; k < tie.length; k++) items[i + k] = tie[k]!;
    }
    i = j;
  }
}

/** The in-band error line of the JSON form (intdash REST API model DataPointDataError). */
function errorLine(m: MeasRow, tf: TimeFormat, description: string): string {
  const rest = JSON.stringify({
    measurement_uuid: m.uuid,
    created_at: new Date().toISOString(),
    data_type: "",
    data_id: "intdash/measurement/get/data/error",
    data_name: "intdash/measurement/get/data/error",
    data: { error: "unexpected", error_description: description },
  });
  return `{"time":${jsonTime(basetimeNs(m), tf)},${rest.slice(1)}\n`;
}

type Log = { warn(o: object, m: string): void };

/** Where a measurement's chunks are read from: their rows, and the files holding their payloads. */
export interface ChunkSource {
  db: Queryable;
  files: PayloadFiles;
}

export async function* streamData(src: ChunkSource, qy: DataQuery, log: Log): AsyncGenerator<Buffer> {
  let measurements = await measurementsForName(src.db, qy.project, qy.name);
  if (qy.since) measurements = measurements.filter((m) => m.updated_at >= qy.since!);
  if (qy.desc) measurements.reverse();
  const match = bothMatch(compileIdq(qy.idq), compileDataIdFilter(qy.dataIdFilter));
  let left = qy.limit ?? Number.POSITIVE_INFINITY;
  let parts: Buffer[] = [];
  let text = "";
  let size = 0;
  const flush = () => {
    if (text) parts.push(Buffer.from(text));
    const b = Buffer.concat(parts);
    parts = [];
    text = "";
    size = 0;
    return b;
  };
  for (const m of measurements) {
    if (left <= 0) break;
    const base = basetimeNs(m);
    let failed = false;
    for await (const batch of measurementPoints(src, m, qy, match, log)) {
      for (const it of batch) {
        if (left <= 0 || failed) break;
        if ("error" in it) {
          // The protobuf framing has no error message: there the damaged chunk is only skipped.
          if (qy.format === "json") text += errorLine(m, qy.timeFormat, it.error);
          failed = qy.exitOnError;
          continue;
        }
        left--;
        if (qy.format === "json") {
          const line = jsonLine(it.group, base + it.elapsed, it.payload, qy.timeFormat);
          text += line;
          size += line.length;
        } else {
          const f = dataFrame(it.group, base + it.elapsed, it.payload);
          parts.push(f);
          size += f.length;
        }
        if (size >= FLUSH_BYTES) yield flush();
      }
      if (failed || left <= 0) break;
    }
    if (failed) break;
  }
  if (size > 0 || text) yield flush();
}
