// Streams of chunks for the ingest journal's tests, and what a record or an apply makes of them.
import { chunkRows } from "../../../../cloud/measurements/storage/chunk-write.js";
import type { StreamChunks } from "../../../../cloud/measurements/ingest/shared-commit.js";

export const stream = (session: string, numbers: number[]): StreamChunks => ({
  up: { streamId: `${session}-s`, sessionId: session, projectUuid: "p", nodeId: "n" },
  chunks: numbers.map((n) => ({
    sequenceNumber: n,
    groups: [
      {
        name: "a/b",
        type: "float64",
        points: [{ elapsedNs: BigInt(n) * 1_000_000n, payload: Buffer.from([n, 1, 2]) }],
      },
      { name: "c", type: "string", points: [{ elapsedNs: -5n, payload: Buffer.alloc(0) }] },
    ],
  })),
});
/** What a record holds, comparable with toEqual. */
export const plain = (streams: StreamChunks[]) =>
  streams.map((s) => ({
    up: s.up,
    chunks: s.chunks.map((c) =>
      "groups" in c
        ? {
            n: c.sequenceNumber,
            g: c.groups.map((g) => [g.name, g.type, g.points.map((p) => [p.elapsedNs, [...p.payload]])]),
          }
        : c,
    ),
  }));

/** What the apply stores of the streams' chunks (payloads, points, elapsed ranges), per stream. */
export const stored = (streams: StreamChunks[]) =>
  streams.map((s) => ({ up: s.up, rows: chunkRows("m", 1, s.chunks, 0).rows.map(({ chunk: _, ...row }) => row) }));
