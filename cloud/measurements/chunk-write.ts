// Writes chunks of one sequence inside a caller's transaction: one row per sequence number,
// a repeated number is reported as skipped and changes nothing.
import type { Queryable } from "../storage/db.js";
import { encodeChunk, type Chunk } from "./codec.js";
import { encodeRawChunk, type PreparedChunk, type RawChunk } from "./raw-chunk.js";
import { raiseMaxElapsed } from "./repo-measurements.js";
import { addDataIds, addReceived, ensureSequence, insertChunks, storedNumbers, type ChunkRowInput } from "./repo-sequences.js";

export type ChunkResult = "ok" | "skipped";

const clamp = (n: bigint) => Number(n > 9007199254740991n ? 9007199254740991n : n < -9007199254740991n ? -9007199254740991n : n);

export function chunkStats(c: Chunk): { points: number; min: number; max: number } {
  let points = 0;
  let min: bigint | undefined;
  let max: bigint | undefined;
  for (const g of c.groups)
    for (const p of g.points) {
      points++;
      if (min === undefined || p.elapsedNs < min) min = p.elapsedNs;
      if (max === undefined || p.elapsedNs > max) max = p.elapsedNs;
    }
  return { points, min: clamp(min ?? 0n), max: clamp(max ?? 0n) };
}

/** The stored row payload and its figures, from decoded points or from received bytes. */
function prepare(c: Chunk | RawChunk): PreparedChunk {
  if ("rawGroups" in c) return encodeRawChunk(c);
  const st = chunkStats(c);
  return { payload: encodeChunk(c), points: st.points, minElapsedNs: st.min, maxElapsedNs: st.max };
}

const idsOf = (c: Chunk | RawChunk) => ("rawGroups" in c ? c.rawGroups : c.groups);

export async function writeChunks(
  tx: Queryable,
  measUuid: string,
  sequenceUuid: string,
  chunks: ReadonlyArray<Chunk | RawChunk>,
  now: string,
): Promise<{ results: ChunkResult[]; stored: number }> {
  const seq = await ensureSequence(tx, measUuid, sequenceUuid, now);
  const createdAtMs = Date.parse(now);
  const taken = await storedNumbers(tx, seq.id, [...new Set(chunks.map((c) => c.sequenceNumber))]);
  const results: ChunkResult[] = [];
  const rows: ChunkRowInput[] = [];
  const seenIds = new Set<string>();
  const distinctIds: Array<{ type: string; name: string }> = [];
  let points = 0;
  let maxElapsed = Number.NEGATIVE_INFINITY;
  for (const c of chunks) {
    // Stored before, or repeated within this batch: skipped.
    if (taken.has(c.sequenceNumber)) {
      results.push("skipped");
      continue;
    }
    taken.add(c.sequenceNumber);
    const st = prepare(c);
    rows.push({
      measUuid,
      sequenceId: seq.id,
      sequenceNumber: c.sequenceNumber,
      dataPoints: st.points,
      minElapsedNs: st.minElapsedNs,
      maxElapsedNs: st.maxElapsedNs,
      payload: st.payload,
      createdAtMs,
    });
    results.push("ok");
    for (const g of idsOf(c)) {
      const key = `${g.type}\u0000${g.name}`;
      if (!seenIds.has(key)) (seenIds.add(key), distinctIds.push({ type: g.type, name: g.name }));
    }
    points += st.points;
    if (st.points > 0) maxElapsed = Math.max(maxElapsed, st.maxElapsedNs);
  }
  if (rows.length > 0) {
    await insertChunks(tx, rows);
    await addDataIds(tx, measUuid, distinctIds);
    await addReceived(tx, seq.id, points, rows.length, now);
    if (Number.isFinite(maxElapsed)) await raiseMaxElapsed(tx, measUuid, maxElapsed, now);
  }
  return { results, stored: rows.length };
}
