// The data endpoint and the reduced series read a measurement in pages of rows, each page after the last row's
// key. A compaction that runs between two pages moves log rows from both sides of that key into packs placed at
// their first chunk: the read must still give every point once, in time order. Here the reads run the services
// on a real peer's database with the whole chunk log compacted before chosen pages, so it happens every time.
import { describe, expect, it } from "vitest";
import type { Db, Queryable } from "../../../cloud/database/db.js";
import { appendLogRows, compactLog } from "../../../cloud/measurements/repo/chunk-log.js";
import { ensureSequences } from "../../../cloud/measurements/repo/chunk-batch.js";
import { encodeChunk } from "../../../cloud/measurements/formats/codec.js";
import { streamData } from "../../../cloud/measurements/service/data-stream.js";
import { reducedSeries } from "../../../cloud/measurements/service/reduced-series.js";
import { BASETIME, createMeasurement, DEFAULT_PROJECT, ndjson, uuid, withPeer } from "./helpers.js";

const US = 1000;
const BASE_NS = BigInt(Date.parse(BASETIME)) * 1_000_000n + BigInt(BASETIME.slice(23, 29));
const f64 = (v: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b;
};

/** A point of the test: its value names it (sequence * 10,000 + number). */
interface Pt {
  value: number;
  us: number;
}

describe("measurements: a paged read while the chunk log is compacted", () => {
  const t = withPeer();
  const db = () => t.peer.svc.db;
  const files = () => t.peer.svc.measurements.measurements.files;

  /** A measurement with `sequences` sequences, each with no rows yet; their ids. */
  async function measurement(sequences: number) {
    const m = (await createMeasurement(t.call)).uuid as string;
    const keys = Array.from({ length: sequences }, () => ({ measUuid: m, uuid: uuid() }));
    const rows = await ensureSequences(db(), keys, new Date().toISOString());
    return { m, seqs: keys.map((k) => rows.find((r) => r.uuid === k.uuid)!.id) };
  }

  /**
   * Appends one-point chunks to the chunk log, as the broker's commit does: sequence `s` (index `i`) gets numbers
   * `from`..`to`, chunk n at `us(n)` µs. The peer's own compaction never runs for them (it runs after its commits).
   */
  async function logChunks(m: string, s: number, i: number, from: number, to: number, us: (n: number) => number) {
    const rows = [];
    const points: Pt[] = [];
    for (let n = from; n <= to; n++) {
      const value = (i + 1) * 10_000 + n;
      const ns = us(n) * US;
      const groups = [{ name: "v", type: "float64", points: [{ elapsedNs: BigInt(ns), payload: f64(value) }] }];
      const payload = encodeChunk({ sequenceNumber: n, groups });
      rows.push({
        sequenceNumber: n,
        dataPoints: 1,
        minElapsedNs: ns,
        maxElapsedNs: ns,
        payload,
        fileOffset: null,
        fileLength: null,
      });
      points.push({ value, us: us(n) });
    }
    expect(await appendLogRows(db(), [{ measUuid: m, sequenceId: s, rows }], Date.now())).toEqual([]);
    return points;
  }

  /** The peer's database, with `before(page)` run before each data page of a read (pages counted from 1). */
  function paging(before: (page: number) => Promise<void>): Queryable {
    const real: Db = db();
    let page = 0;
    return {
      dialect: real.dialect,
      run: (sql, params) => real.run(sql, params),
      get: (sql, params) => real.get(sql, params),
      exec: (sql) => real.exec(sql),
      all: async (sql, params) => {
        if (sql.includes("FROM meas_chunk_log c")) await before(++page);
        return real.all(sql, params);
      },
    };
  }
  const compact = () => db().transaction((tx) => compactLog(tx));
  const compactBefore =
    (...pages: number[]) =>
    async (page: number) => {
      if (pages.includes(page)) expect(await compact()).toBeGreaterThan(0);
    };

  /** The values the data endpoint's service gives, in its order. */
  async function read(m: string, desc: boolean, before: (page: number) => Promise<void>) {
    const warnings: string[] = [];
    const src = { db: paging(before), files: files() };
    const qy = { project: DEFAULT_PROJECT, name: m, desc, timeFormat: "ns" as const, format: "json" as const };
    let text = "";
    for await (const b of streamData(src, { ...qy, exitOnError: false }, { warn: (_o, msg) => warnings.push(msg) }))
      text += b.toString();
    expect(warnings).toEqual([]);
    return ndjson(text).map((l) => Buffer.from(l.data.d, "base64").readDoubleBE(0));
  }
  const inOrder = (points: Pt[], desc: boolean) => {
    const sorted = [...points].sort((x, y) => x.us - y.us || x.value - y.value).map((p) => p.value);
    return desc ? sorted.reverse() : sorted;
  };

  for (const desc of [false, true])
    it(`gives every point of one sequence once when its log rows are packed after the first page (${desc ? "desc" : "asc"})`, async () => {
      const { m, seqs } = await measurement(1);
      const points = await logChunks(m, seqs[0]!, 0, 1, 300, (n) => n * 1000);
      // Page one reads 128 log rows; the compaction then packs 1-256 and 257-300, the first across the page's key.
      expect(await read(m, desc, compactBefore(2))).toEqual(inOrder(points, desc));
    });

  for (const desc of [false, true])
    it(`gives every point of interleaved sequences once, one more of them packed before each page (${desc ? "desc" : "asc"})`, async () => {
      const { m, seqs } = await measurement(4);
      const points = (
        await Promise.all(seqs.map((s, i) => logChunks(m, s, i, 1, 150, (n) => n * 1000 + i * 200)))
      ).flat();
      // Before page p sequence p - 1 is packed: its pack straddles the last page's key, and sequences read from
      // the log in earlier pages are packed only pages later.
      const before = async (page: number) => {
        const s = seqs[page - 2];
        if (s !== undefined) expect(await db().transaction((tx) => compactLog(tx, { sequenceId: s }))).toBe(150);
      };
      expect(await read(m, desc, before)).toEqual(inOrder(points, desc));
    });

  for (const desc of [false, true])
    it(`gives every point once, in stored order, when the chunks share one time (${desc ? "desc" : "asc"})`, async () => {
      const { m, seqs } = await measurement(1);
      const points = await logChunks(m, seqs[0]!, 0, 1, 300, () => 5000);
      // Equal times: the pack 1-256 sorts after (desc) the key of the first page, which read 300 to 173 from the log.
      expect(await read(m, desc, compactBefore(2))).toEqual(inOrder(points, desc));
      // Read again from the packs alone: the same order (descending takes a pack's chunks last number first).
      expect(await read(m, desc, async () => undefined)).toEqual(inOrder(points, desc));
    });

  for (const desc of [false, true])
    it(`reads packs made before the read once, beside packs made during it (${desc ? "desc" : "asc"})`, async () => {
      const { m, seqs } = await measurement(3);
      // Sequence 1's 300 chunks packed before the read (1-256, 257-300), spanning several pages of the others' rows.
      const points = await logChunks(m, seqs[0]!, 0, 1, 300, (n) => n * 1000);
      await compact();
      points.push(...(await logChunks(m, seqs[1]!, 1, 1, 200, (n) => n * 1500 + 100)));
      points.push(...(await logChunks(m, seqs[2]!, 2, 1, 200, (n) => n * 1500 + 700)));
      // Before the second page more chunks of sequence 2 arrive, later than all others, and the log is packed.
      const before = async (page: number) => {
        if (page !== 2) return;
        points.push(...(await logChunks(m, seqs[1]!, 1, 201, 260, (n) => n * 1500 + 100)));
        await compact();
      };
      const got = await read(m, desc, before);
      // Desc starts from the end: the chunks that arrived meanwhile come before the points it read first, so it
      // misses them as any read that began before they arrived would; asc reaches them.
      expect(got).toEqual(inOrder(desc ? points.filter((p) => p.value < 20_201 || p.value > 20_260) : points, desc));
    });

  it("gives the reduced series every point once when the log is packed between its pages", async () => {
    const { m, seqs } = await measurement(2);
    const points = (
      await Promise.all(seqs.map((s, i) => logChunks(m, s, i, 1, 300, (n) => n * 1000 + i * 500)))
    ).flat();
    const series = await reducedSeries(
      { db: paging(compactBefore(2)), files: files() },
      {
        project: DEFAULT_PROJECT,
        measurement: m,
        dataType: "float64",
        dataId: "v",
        startNs: BASE_NS,
        endNs: BASE_NS + 1_000_000_000n,
        buckets: 1,
      },
    );
    expect(series.point_count).toBe(points.length);
    expect(series.buckets.count).toEqual([600]);
  });
});
