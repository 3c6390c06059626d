// GET .../data: a measurement's points in time order, streamed. Chunks are read in order of their
// earliest (asc) or latest (desc) point; a heap merges their points and releases a point once no
// chunk still to be read can hold an earlier (later) one, so memory stays at the overlapping chunks.
import type { Queryable } from "../storage/db.js";
import { decodeChunk, encodeDataResponse, frame, type DataPoint } from "./codec.js";
import { basetimeNs, type MeasRow } from "./model.js";
import { chunkPage, type ChunkKey, type ChunkRow } from "./repo-data.js";
import { measurementsForName } from "./repo-measurement-list.js";
import { jsonTime, type TimeFormat } from "./time.js";

export interface DataQuery {
  project: string;
  name: string;
  idq?: readonly string[];
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
  key: [number, number, number, number];
  type: string;
  name: string;
  point: DataPoint;
  createdAtMs: number;
}

const PAGE = 128;
const FLUSH_BYTES = 64 * 1024;
const SAFE = 9007199254740991n;
const clampNum = (n: bigint) => Number(n > SAFE ? SAFE : n < -SAFE ? -SAFE : n);

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}

/** `idq[]` entries are `<data_type>:<data_name>` with `*` wildcards; a bare `<data_type>` means any name. */
export function compileIdq(idq: readonly string[] | undefined): ((type: string, name: string) => boolean) | undefined {
  if (!idq?.length) return undefined;
  const tests = idq.map((q) => {
    const i = q.indexOf(":");
    const type = globToRegExp(i < 0 ? q : q.slice(0, i));
    const name = globToRegExp(i < 0 ? "*" : q.slice(i + 1));
    return (t: string, n: string) => type.test(t) && name.test(n);
  });
  return (t, n) => tests.some((f) => f(t, n));
}

class Heap {
  private readonly a: Item[] = [];
  constructor(private readonly before: (x: Item, y: Item) => boolean) {}
  get size() {
    return this.a.length;
  }
  peek(): Item | undefined {
    return this.a[0];
  }
  push(x: Item): void {
    const a = this.a;
    a.push(x);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!this.before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): Item | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length && last) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.before(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.before(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

function ascBefore(x: Item, y: Item): boolean {
  if (x.elapsed !== y.elapsed) return x.elapsed < y.elapsed;
  for (let i = 0; i < 4; i++) if (x.key[i] !== y.key[i]) return x.key[i]! < y.key[i]!;
  return false;
}
const descBefore = (x: Item, y: Item) => ascBefore(y, x);

/** The points of one measurement, in order, within [from, to) of elapsed time. */
async function* measurementPoints(q: Queryable, m: MeasRow, qy: DataQuery, match: ReturnType<typeof compileIdq>, onError: (e: Error, row: ChunkRow) => void) {
  const base = basetimeNs(m);
  const from = qy.startNs !== undefined ? qy.startNs - base : undefined;
  const to = qy.endNs !== undefined ? qy.endNs - base : undefined;
  const heap = new Heap(qy.desc ? descBefore : ascBefore);
  let after: ChunkKey | undefined;
  for (;;) {
    const rows = await chunkPage(q, {
      measUuid: m.uuid,
      desc: qy.desc,
      after,
      from: from !== undefined ? clampNum(from) : undefined,
      to: to !== undefined ? clampNum(to) : undefined,
      limit: PAGE,
    });
    for (const row of rows) {
      const bound = BigInt(qy.desc ? row.max_elapsed_ns : row.min_elapsed_ns);
      // No chunk from here on holds a point before (after) `bound`: release what precedes it.
      while (heap.size && (qy.desc ? heap.peek()!.elapsed > bound : heap.peek()!.elapsed < bound)) yield heap.pop()!;
      let chunk;
      try {
        chunk = decodeChunk(row.payload);
      } catch (err) {
        onError(err as Error, row);
        continue;
      }
      chunk.groups.forEach((g, gi) => {
        if (match && !match(g.type, g.name)) return;
        g.points.forEach((p, pi) => {
          if (from !== undefined && p.elapsedNs < from) return;
          if (to !== undefined && p.elapsedNs >= to) return;
          heap.push({ elapsed: p.elapsedNs, key: [row.sequence_id, row.sequence_number, gi, pi], type: g.type, name: g.name, point: p, createdAtMs: row.created_at_ms });
        });
      });
    }
    if (rows.length < PAGE) break;
    const last = rows[rows.length - 1]!;
    after = [qy.desc ? last.max_elapsed_ns : last.min_elapsed_ns, last.sequence_id, last.sequence_number];
  }
  while (heap.size) yield heap.pop()!;
}

function jsonLine(m: MeasRow, base: bigint, it: Item, tf: TimeFormat): string {
  return (
    `{"time":${jsonTime(base + it.elapsed, tf)},"measurement_uuid":"${m.uuid}","created_at":${JSON.stringify(new Date(it.createdAtMs).toISOString())},` +
    `"data_type":${JSON.stringify(it.type)},"data_id":${JSON.stringify(it.name)},"data":{"d":"${Buffer.from(it.point.payload).toString("base64")}"}}\n`
  );
}

/** The in-band error line of the JSON form (routes.md 5a: DataPointDataError). */
function errorLine(m: MeasRow, tf: TimeFormat, description: string): string {
  return `${JSON.stringify({
    time: "__TIME__",
    measurement_uuid: m.uuid,
    created_at: new Date().toISOString(),
    data_type: "",
    data_id: "intdash/measurement/get/data/error",
    data: { error: "unexpected", error_description: description },
  }).replace('"__TIME__"', jsonTime(basetimeNs(m), tf))}\n`;
}

export async function* streamData(q: Queryable, qy: DataQuery, log: { warn(o: object, m: string): void }): AsyncGenerator<Buffer> {
  let measurements = await measurementsForName(q, qy.project, qy.name);
  if (qy.since) measurements = measurements.filter((m) => m.updated_at >= qy.since!);
  if (qy.desc) measurements.reverse();
  const match = compileIdq(qy.idq);
  let left = qy.limit ?? Number.POSITIVE_INFINITY;
  let parts: Buffer[] = [];
  let size = 0;
  const push = (b: Buffer) => {
    parts.push(b);
    size += b.length;
  };
  for (const m of measurements) {
    if (left <= 0) break;
    const base = basetimeNs(m);
    let failed = false;
    const onError = (err: Error, row: ChunkRow) => {
      log.warn({ err: err.message, measurement: m.uuid, sequence_number: row.sequence_number }, "stored chunk could not be decoded");
      if (qy.format === "json") push(Buffer.from(errorLine(m, qy.timeFormat, `a stored chunk could not be decoded: ${err.message}`)));
      if (qy.exitOnError) failed = true;
    };
    for await (const it of measurementPoints(q, m, qy, match, onError)) {
      if (failed || left <= 0) break;
      left--;
      if (qy.format === "json") push(Buffer.from(jsonLine(m, base, it, qy.timeFormat)));
      else
        push(
          frame(
            encodeDataResponse({
              timeNs: base + it.elapsed,
              dataType: it.type,
              dataName: it.name,
              payload: it.point.payload,
              measurementUuid: m.uuid,
              createdAtNs: BigInt(it.createdAtMs) * 1_000_000n,
            }),
          ),
        );
      if (size >= FLUSH_BYTES) {
        yield Buffer.concat(parts);
        parts = [];
        size = 0;
      }
    }
    if (failed) break;
  }
  if (size > 0) yield Buffer.concat(parts);
}

