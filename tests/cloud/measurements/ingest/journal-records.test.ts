// The ingest journal's records on their own: what a record holds reads back as the chunks the apply stores,
// whatever version wrote it.
import { describe, expect, it } from "vitest";
import {
  decodeJournalRecord,
  encodeJournalRecord,
  journalChunkCount,
  journalChunks,
} from "../../../../cloud/measurements/ingest/journal-codec.js";
import { parseHeader } from "../../../../cloud/measurements/ingest/journal-header.js";
import type { StreamChunks } from "../../../../cloud/measurements/ingest/shared-commit.js";
import { RawPointGroup } from "../../../../proto/wire/chunk-scan.js";
import { toLong } from "../../../../proto/wire/long.js";
import { iscp2 } from "../../../../proto/wire/message.js";
import { plain, stored, stream } from "./journal-fixtures.js";

describe("journal records", () => {
  it("decodes what it encodes: streams, numbers, data ids, elapsed times and payloads", () => {
    const streams = [stream("s1", [1, 2, 3]), stream("s2", [9])];
    expect(plain(decodeJournalRecord(encodeJournalRecord(streams)))).toEqual(plain(streams));
  });

  /** The stream's chunks as the broker hands them over: groups of raw bytes with their scanned figures. */
  const raw = (s: StreamChunks): StreamChunks => ({
    up: s.up,
    chunks: s.chunks.map((c) => {
      if (!("groups" in c)) return c;
      return {
        sequenceNumber: c.sequenceNumber,
        rawGroups: c.groups.map((g) => {
          const bytes = iscp2.DataPointGroup.encode({
            dataPoints: g.points.map((p) => ({ elapsedTime: toLong(p.elapsedNs), payload: p.payload })),
          }).finish();
          const times = g.points.map((p) => Number(p.elapsedNs));
          const payloadBytes = g.points.reduce((n, p) => n + p.payload.length, 0);
          return {
            name: g.name,
            type: g.type,
            points: new RawPointGroup(
              undefined,
              0,
              g.points.length,
              bytes,
              payloadBytes,
              Math.min(...times),
              Math.max(...times),
            ),
          };
        }),
      };
    }),
  });

  it("reads back, without decoding a point, chunks that store as the received ones do", () => {
    const streams = [stream("s1", [1, 2, 3]), raw(stream("s2", [9, 10])), stream("s3", [4])];
    const back = journalChunks(encodeJournalRecord(streams));
    expect(back.flatMap((s) => s.chunks).every((c) => "rawGroups" in c)).toBe(true);
    expect(stored(back)).toEqual(stored(streams));
  });

  /** The record as versions before the binary header wrote it: the same header as JSON (groups cut to `keep`). */
  const jsonRecord = (streams: StreamChunks[], keep = 7): Buffer => {
    const body = encodeJournalRecord(streams);
    const n = body.readUInt32BE(0);
    const header = parseHeader(body.subarray(4, 4 + n));
    for (const c of header.c) c[2] = c[2].map((g) => g.slice(0, keep) as (typeof c)[2][number]);
    const h = Buffer.from(JSON.stringify(header));
    const old = Buffer.concat([Buffer.alloc(4), h, body.subarray(4 + n)]);
    old.writeUInt32BE(h.length, 0);
    return old;
  };

  it("reads a record without the groups' figures (an earlier version's) by decoding its points", () => {
    const streams = [stream("s1", [1, 2]), raw(stream("s2", [3]))];
    const back = journalChunks(jsonRecord(streams, 3));
    expect(back.flatMap((s) => s.chunks).every((c) => "groups" in c)).toBe(true);
    expect(stored(back)).toEqual(stored(streams));
  });

  it("reads a record with a JSON header (left by an earlier version's crash) as it reads its own", () => {
    const streams = [stream("s1", [1, 2]), raw(stream("s2", [3]))];
    const back = journalChunks(jsonRecord(streams));
    expect(back.flatMap((s) => s.chunks).every((c) => "rawGroups" in c)).toBe(true);
    expect(stored(back)).toEqual(stored(streams));
    expect(journalChunkCount(jsonRecord(streams))).toBe(3);
  });

  it("keeps a chunk of more groups than 16 bits count", () => {
    const bytes = iscp2.DataPointGroup.encode({
      dataPoints: [{ elapsedTime: toLong(7n), payload: Buffer.from([1, 2, 3]) }],
    }).finish();
    const groups = 70_000;
    const names = Array.from({ length: groups }, (_, i) => `g${i % 3}`);
    const many: StreamChunks = {
      up: { streamId: "s", sessionId: "many", projectUuid: "p", nodeId: "n" },
      chunks: [
        {
          sequenceNumber: 1,
          rawGroups: names.map((name) => ({
            name,
            type: "bytes",
            points: new RawPointGroup(undefined, 0, 1, bytes, 3, 7, 7),
          })),
        },
      ],
    };
    const back = journalChunks(encodeJournalRecord([many]));
    const chunk = back[0]!.chunks[0]!;
    if (!("rawGroups" in chunk)) throw new Error("expected the received groups back");
    expect(chunk.rawGroups.map((g) => g.name)).toEqual(names);
    expect(chunk.rawGroups.every((g) => Buffer.from(g.points.raw).equals(bytes) && g.points.count === 1)).toBe(true);
  });

  it("keeps texts beyond ASCII, extreme elapsed times and a header larger than its first buffer", () => {
    const odd = (i: number): StreamChunks => ({
      up: { streamId: `strom-${i}`, sessionId: `sitzung-${i}-ü`, projectUuid: "p", nodeId: `knoten-${i}-計測` },
      chunks: [
        {
          sequenceNumber: 4_294_967_295 - i,
          groups: [
            {
              name: `温度/${i}`,
              type: "float64",
              points: [
                { elapsedNs: -(2n ** 53n) + 1n, payload: Buffer.from([i & 255]) },
                { elapsedNs: 2n ** 53n - 1n, payload: Buffer.alloc(0) },
              ],
            },
          ],
        },
      ],
    });
    // 1,000 streams with a chunk each: about 130 KB of header, past the writer's first 64 KiB.
    const streams = Array.from({ length: 1_000 }, (_, i) => raw(odd(i)));
    const first = encodeJournalRecord(streams);
    const copy = Buffer.from(first);
    encodeJournalRecord([stream("other", [1])]); // reuses the writer's buffer: the first record stays whole
    expect(first).toEqual(copy);
    expect(first.readUInt32BE(0)).toBeGreaterThan(64 * 1024);
    const back = journalChunks(first);
    expect(back.map((s) => s.up)).toEqual(streams.map((s) => s.up));
    expect(stored(back)).toEqual(stored(streams));
    expect(plain(decodeJournalRecord(first))).toEqual(
      plain(streams.map((s, i) => ({ up: s.up, chunks: odd(i).chunks }))),
    );
  });
});
