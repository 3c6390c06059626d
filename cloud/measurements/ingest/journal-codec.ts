// One record of the ingest journal (ingest-journal.ts): the chunks of every stream in one group commit, as the
// bytes to replay them from after a crash: a binary header (journal-header.ts) naming each stream and, per chunk,
// its stream, sequence number and per group its data id, byte length and figures (points, elapsed range, payload
// bytes), then the groups' bytes. A group's bytes are its `data_points` entries as iSCP sent them (a DataPointGroup
// holding only data_points), copied as they are for a chunk received as raw bytes. Records of earlier versions
// (`[u32 header length][header JSON]`, with or without the figures) are still read.
import { toBigInt, toLong } from "../../../proto/wire/long.js";
import { RawPointGroup } from "../../../proto/wire/chunk-scan.js";
import { iscp2 } from "../../../proto/wire/message.js";
import type { Chunk } from "../formats/codec.js";
import type { RawChunk } from "../formats/raw-chunk.js";
import { chunkStats } from "../storage/chunk-write.js";
import type { StreamChunks } from "./shared-commit.js";
import { isBinaryRecord, RecordReader, RecordWriter } from "./journal-header.js";

/** Adds a chunk's groups to the record: their bytes and figures (the points' count and elapsed range, as scanned). */
function addGroups(w: RecordWriter, c: Chunk | RawChunk): void {
  if ("rawGroups" in c) {
    for (const { name, type, points: g } of c.rawGroups)
      w.group(name, type, g.raw, g.count, g.minElapsed, g.maxElapsed, g.payloadBytes);
    return;
  }
  for (const g of c.groups) {
    const bytes = iscp2.DataPointGroup.encode({
      dataPoints: g.points.map((p) => ({ elapsedTime: toLong(p.elapsedNs), payload: p.payload })),
    }).finish();
    // The group's figures as a stored chunk's (chunk-write.ts), so a decoded chunk stores alike after its apply.
    const { points, min, max } = chunkStats({ sequenceNumber: c.sequenceNumber, groups: [g] });
    const payloadBytes = g.points.reduce((n, p) => n + p.payload.length, 0);
    w.group(g.name, g.type, bytes, points, min, max, payloadBytes);
  }
}

export const encodeJournalRecord = (streams: readonly StreamChunks[]): Buffer => journalRecord(streams).body;

/**
 * The record of the streams (the received frames may go once it is made: the apply reads its chunks back from the
 * record, `journalChunks`), with the number of chunks and data points it holds.
 */
export function journalRecord(streams: readonly StreamChunks[]): { body: Buffer; chunks: number; points: number } {
  const w = new RecordWriter();
  for (const [i, s] of streams.entries()) {
    w.stream(s.up);
    for (const c of s.chunks) {
      w.chunk(i, c.sequenceNumber, "rawGroups" in c ? c.rawGroups.length : c.groups.length);
      addGroups(w, c);
    }
  }
  return { body: w.finish(), chunks: w.chunks, points: w.points };
}

/**
 * The streams of a record as the apply stores them: chunks whose groups are views of the record, with the figures
 * it holds (no point decoded). Made when the apply runs, not when the record is: objects that live until the apply
 * would outlive the young generation and fill the old one. A chunk of a record without the figures is decoded.
 */
export function journalChunks(body: Buffer): StreamChunks[] {
  if (!isBinaryRecord(body)) return legacyChunks(body, false);
  const r = new RecordReader(body);
  const streams = r.streams.map((up) => ({ up, chunks: [] as RawChunk[] }));
  let groups: RawChunk["rawGroups"] = [];
  r.read(
    (stream, sequenceNumber) => streams[stream]!.chunks.push({ sequenceNumber, rawGroups: (groups = []) }),
    (name, type, bytes, count, min, max, payloadBytes) =>
      groups.push({ name, type, points: new RawPointGroup(undefined, 0, count, bytes, payloadBytes, min, max) }),
  );
  return streams;
}

/** The streams of a record, their chunks with decoded points. */
export function decodeJournalRecord(body: Buffer): StreamChunks[] {
  if (!isBinaryRecord(body)) return legacyChunks(body, true);
  const r = new RecordReader(body);
  const streams = r.streams.map((up) => ({ up, chunks: [] as Chunk[] }));
  let groups: Chunk["groups"] = [];
  r.read(
    (stream, sequenceNumber) => streams[stream]!.chunks.push({ sequenceNumber, groups: (groups = []) }),
    (name, type, bytes) => groups.push({ name, type, points: decodePoints(bytes) }),
  );
  return streams;
}

/** How many chunks a record holds. */
export const journalChunkCount = (body: Buffer): number =>
  isBinaryRecord(body) ? new RecordReader(body).chunkCount : readLegacyHeader(body).header.c.length;

const decodePoints = (bytes: Uint8Array) =>
  iscp2.DataPointGroup.decode(bytes).dataPoints.map((d) => ({
    elapsedNs: toBigInt(d.elapsedTime),
    payload: d.payload ?? new Uint8Array(),
  }));

/** A group in an earlier version's JSON header: [name, type, byte length, points, min, max, payload bytes]. */
type LegacyGroup = [string, string, number, number?, number?, number?, number?];

interface LegacyHeader {
  /** Streams: [stream id, session id, project uuid, node id]. */
  u: Array<[string, string, string, string]>;
  /** Chunks: [index in u, sequence number, groups]. */
  c: Array<[number, number, LegacyGroup[]]>;
}

function readLegacyHeader(body: Buffer): { header: LegacyHeader; at: number } {
  const n = body.readUInt32BE(0);
  return { header: JSON.parse(body.subarray(4, 4 + n).toString()) as LegacyHeader, at: 4 + n };
}

/** The chunks of an earlier version's record: views with the figures it holds, else (or if asked) decoded. */
function legacyChunks(body: Buffer, decode: boolean): StreamChunks[] {
  const { header, at } = readLegacyHeader(body);
  const streams = header.u.map(([streamId, sessionId, projectUuid, nodeId]) => ({
    up: { streamId, sessionId, projectUuid, nodeId },
    chunks: [] as Array<Chunk | RawChunk>,
  }));
  let p = at;
  for (const [i, sequenceNumber, groups] of header.c) {
    const view = (len: number) => body.subarray(p, (p += len));
    const chunk: Chunk | RawChunk =
      !decode && groups.every((g) => g.length >= 7)
        ? {
            sequenceNumber,
            rawGroups: groups.map(([name, type, len, count, min, max, payloadBytes]) => ({
              name,
              type,
              points: new RawPointGroup(undefined, 0, count!, view(len), payloadBytes!, min!, max!),
            })),
          }
        : {
            sequenceNumber,
            groups: groups.map(([name, type, len]) => ({ name, type, points: decodePoints(view(len)) })),
          };
    streams[i]!.chunks.push(chunk);
  }
  return streams;
}
