// One record of the ingest journal (ingest-journal.ts): the chunks of every stream in one group commit, as the
// bytes to replay them from after a crash. `[u32 header length][header][groups' bytes back to back]`; the header
// (journal-header.ts) names each stream (stream id, session id, project, node) and per chunk its stream's index, sequence
// number and per group its data id, byte length and figures (points, elapsed range, payload bytes). A group's bytes
// are its `data_points` entries as iSCP sent them (a DataPointGroup holding only data_points), copied as they are
// for a chunk received as raw bytes.
import { toBigInt, toLong } from "../../../proto/wire/long.js";
import { RawPointGroup } from "../../../proto/wire/chunk-scan.js";
import { iscp2 } from "../../../proto/wire/message.js";
import type { Chunk } from "../formats/codec.js";
import type { RawChunk } from "../formats/raw-chunk.js";
import { chunkStats } from "../storage/chunk-write.js";
import { type GroupEntry, HeaderWriter, type JournalHeader, parseHeader } from "./journal-header.js";
import type { StreamChunks } from "./shared-commit.js";

/** A decoded chunk's groups as received ones: their bytes, with the figures the broker's scan gives those. */
function rawGroupsOf(c: Chunk): RawChunk["rawGroups"] {
  return c.groups.map((g) => {
    const bytes = iscp2.DataPointGroup.encode({
      dataPoints: g.points.map((p) => ({ elapsedTime: toLong(p.elapsedNs), payload: p.payload })),
    }).finish();
    // The group's figures as a stored chunk's (chunk-write.ts), so a decoded chunk stores alike after its apply.
    const { points, min, max } = chunkStats({ sequenceNumber: c.sequenceNumber, groups: [g] });
    const payloadBytes = g.points.reduce((n, p) => n + p.payload.length, 0);
    return {
      name: g.name,
      type: g.type,
      points: new RawPointGroup(undefined, 0, points, bytes, payloadBytes, min, max),
    };
  });
}

/** Reused by every record (a record is made in one synchronous call). */
const writer = new HeaderWriter();

export const encodeJournalRecord = (streams: readonly StreamChunks[]): Buffer => journalRecord(streams).body;

/**
 * The record of the streams (the received frames may go once it is made: the apply reads its chunks back from the
 * record, `journalChunks`), with the number of chunks and data points it holds.
 */
export function journalRecord(streams: readonly StreamChunks[]): { body: Buffer; chunks: number; points: number } {
  writer.begin(streams.length);
  for (const { up } of streams) writer.stream(up.streamId, up.sessionId, up.projectUuid, up.nodeId);
  writer.beginChunks();
  const parts: Uint8Array[] = [];
  let bytes = 0;
  let points = 0;
  let chunks = 0;
  for (let i = 0; i < streams.length; i++)
    for (const c of streams[i]!.chunks) {
      chunks++;
      const groups = "rawGroups" in c ? c.rawGroups : rawGroupsOf(c);
      writer.chunk(i, c.sequenceNumber, groups.length);
      for (const { name, type, points: g } of groups) {
        writer.group(name, type, g.raw.length, g.count, g.minElapsed, g.maxElapsed, g.payloadBytes);
        points += g.count;
        parts.push(g.raw);
        bytes += g.raw.length;
      }
    }
  const h = writer.end();
  const body = Buffer.allocUnsafe(4 + h.length + bytes);
  body.writeUInt32BE(h.length, 0);
  h.copy(body, 4);
  let p = 4 + h.length;
  for (const part of parts) {
    body.set(part, p);
    p += part.length;
  }
  return { body, chunks, points };
}

/**
 * The streams of a record as the apply stores them: chunks whose groups are views of the record, with the figures
 * it holds (no point decoded). Made when the apply runs, not when the record is: objects that live until the apply
 * would outlive the young generation and fill the old one. A chunk of a record without the figures is decoded.
 */
export function journalChunks(body: Buffer): StreamChunks[] {
  const { header, at } = readHeader(body);
  const streams = streamsOf(header);
  let p = at;
  for (const [i, sequenceNumber, groups] of header.c) {
    let chunk: Chunk | RawChunk;
    if (groups.every((g) => g.length >= 7))
      chunk = {
        sequenceNumber,
        rawGroups: groups.map(([name, type, len, count, min, max, payloadBytes]) => ({
          name,
          type,
          points: new RawPointGroup(undefined, 0, count!, body.subarray(p, (p += len)), payloadBytes!, min!, max!),
        })),
      };
    else [chunk, p] = decodedChunk(body, p, sequenceNumber, groups);
    (streams[i]!.chunks as Array<Chunk | RawChunk>).push(chunk);
  }
  return streams;
}

/** How many chunks a record holds. */
export const journalChunkCount = (body: Buffer): number => readHeader(body).header.c.length;

function readHeader(body: Buffer): { header: JournalHeader; at: number } {
  const n = body.readUInt32BE(0);
  return { header: parseHeader(body.subarray(4, 4 + n)), at: 4 + n };
}

const streamsOf = (header: JournalHeader): StreamChunks[] =>
  header.u.map(([streamId, sessionId, projectUuid, nodeId]) => ({
    up: { streamId, sessionId, projectUuid, nodeId },
    chunks: [],
  }));

/** A chunk with its points decoded from the record at `p`, and where the next chunk begins. */
function decodedChunk(body: Buffer, p: number, sequenceNumber: number, groups: GroupEntry[]): [Chunk, number] {
  const chunk: Chunk = {
    sequenceNumber,
    groups: groups.map(([name, type, len]) => {
      const points = iscp2.DataPointGroup.decode(body.subarray(p, (p += len))).dataPoints;
      return {
        name,
        type,
        points: points.map((d) => ({ elapsedNs: toBigInt(d.elapsedTime), payload: d.payload ?? new Uint8Array() })),
      };
    }),
  };
  return [chunk, p];
}

/** The streams of a record, their chunks with decoded points. */
export function decodeJournalRecord(body: Buffer): StreamChunks[] {
  const { header, at } = readHeader(body);
  const streams = streamsOf(header);
  let p = at;
  for (const [i, sequenceNumber, groups] of header.c) {
    let chunk: Chunk;
    [chunk, p] = decodedChunk(body, p, sequenceNumber, groups);
    (streams[i]!.chunks as Array<Chunk | RawChunk>).push(chunk);
  }
  return streams;
}
