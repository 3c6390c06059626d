// One record of the ingest journal (ingest-journal.ts): the chunks of every stream in one group commit, as the
// bytes to replay them from after a crash. `[u32 header length][header JSON][groups' bytes back to back]`; the
// header names each stream (stream id, session id, project, node) and per chunk its stream's index, sequence
// number and per group its data id and byte length. A group's bytes are its `data_points` entries as iSCP sent
// them (a DataPointGroup holding only data_points), copied as they are for a chunk received as raw bytes.
import { toBigInt, toLong } from "../../../proto/wire/long.js";
import { RawPointGroup } from "../../../proto/wire/chunk-scan.js";
import { iscp2 } from "../../../proto/wire/message.js";
import type { Chunk } from "../formats/codec.js";
import type { RawChunk } from "../formats/raw-chunk.js";
import type { StreamChunks } from "./shared-commit.js";

interface JournalHeader {
  /** Streams: [stream id, session id, project uuid, node id]. */
  u: Array<[string, string, string, string]>;
  /** Chunks: [index in u, sequence number, groups: [name, type, byte length]]. */
  c: Array<[number, number, Array<[string, string, number]>]>;
}

const groupBytes = (c: Chunk | RawChunk): Array<{ name: string; type: string; bytes: Uint8Array }> =>
  "rawGroups" in c
    ? c.rawGroups.map((g) => ({ name: g.name, type: g.type, bytes: g.points.raw }))
    : c.groups.map((g) => ({
        name: g.name,
        type: g.type,
        bytes: iscp2.DataPointGroup.encode({
          dataPoints: g.points.map((p) => ({ elapsedTime: toLong(p.elapsedNs), payload: p.payload })),
        }).finish(),
      }));

export const encodeJournalRecord = (streams: readonly StreamChunks[]): Buffer => journalRecord(streams).body;

/**
 * The record of the streams, and the streams with their chunks' bytes read from the record rather than from the
 * received frames, so the frames can go at once while the chunks wait for their apply (a view of a few bytes would
 * keep a whole socket read buffer alive): raw groups become views of the record, decoded points get payloads of
 * their own.
 */
export function journalRecord(streams: readonly StreamChunks[]): {
  body: Buffer;
  streams: StreamChunks[];
  chunks: number;
  points: number;
} {
  const header: JournalHeader = { u: [], c: [] };
  const parts: Uint8Array[] = [];
  let bytes = 0;
  let points = 0;
  for (const [i, s] of streams.entries()) {
    header.u.push([s.up.streamId, s.up.sessionId, s.up.projectUuid, s.up.nodeId]);
    for (const c of s.chunks) {
      points +=
        "rawGroups" in c
          ? c.rawGroups.reduce((n, g) => n + g.points.count, 0)
          : c.groups.reduce((n, g) => n + g.points.length, 0);
      const groups: Array<[string, string, number]> = [];
      for (const g of groupBytes(c)) {
        groups.push([g.name, g.type, g.bytes.length]);
        parts.push(g.bytes);
        bytes += g.bytes.length;
      }
      header.c.push([i, c.sequenceNumber, groups]);
    }
  }
  const h = Buffer.from(JSON.stringify(header));
  const body = Buffer.allocUnsafe(4 + h.length + bytes);
  body.writeUInt32BE(h.length, 0);
  h.copy(body, 4);
  // Where each group's bytes are in the record, in the order the streams, chunks and groups are walked again below.
  const at: number[] = [];
  let p = 4 + h.length;
  for (const part of parts) {
    at.push(p);
    body.set(part, p);
    p += part.length;
  }
  let k = 0;
  const held = streams.map((s) => ({
    up: s.up,
    chunks: s.chunks.map((c): Chunk | RawChunk => {
      if (!("rawGroups" in c)) {
        k += c.groups.length;
        return {
          sequenceNumber: c.sequenceNumber,
          groups: c.groups.map((g) => ({
            ...g,
            points: g.points.map((pt) => ({ elapsedNs: pt.elapsedNs, payload: Buffer.from(pt.payload) })),
          })),
        };
      }
      return {
        sequenceNumber: c.sequenceNumber,
        rawGroups: c.rawGroups.map((g) => {
          const v = g.points;
          const raw = body.subarray(at[k]!, at[k]! + parts[k++]!.length);
          return {
            ...g,
            points: new RawPointGroup(
              v.dataId,
              v.dataIdAlias,
              v.count,
              raw,
              v.payloadBytes,
              v.minElapsed,
              v.maxElapsed,
            ),
          };
        }),
      };
    }),
  }));
  return { body, streams: held, chunks: header.c.length, points };
}

/** The streams of a record, their chunks with decoded points (a record is read back only after a crash). */
export function decodeJournalRecord(body: Buffer): StreamChunks[] {
  const n = body.readUInt32BE(0);
  const header = JSON.parse(body.subarray(4, 4 + n).toString()) as JournalHeader;
  const streams: StreamChunks[] = header.u.map(([streamId, sessionId, projectUuid, nodeId]) => ({
    up: { streamId, sessionId, projectUuid, nodeId },
    chunks: [],
  }));
  let p = 4 + n;
  for (const [i, sequenceNumber, groups] of header.c) {
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
    (streams[i]!.chunks as Array<Chunk | RawChunk>).push(chunk);
  }
  return streams;
}
