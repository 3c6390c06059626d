// Received frames' buffers are reused only once nothing reads them: the lease rules on their own, then a
// real broker whose storage hook reads chunks after the frame's callback and a downstream that reads late.
import { afterEach, describe, expect, it } from "vitest";
import { POOLED_MIN } from "../../../proto/wire/buffer-pool.js";
import {
  framesReused,
  holdFrame,
  keepFrame,
  markReusable,
  releaseFrame,
  takeFrame,
} from "../../../proto/transport/received-frames.js";
import { iscp2 } from "../../../proto/wire/message.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { ALL, connected, NODE_U } from "../../support/iscp-raw-peer.js";

const N = 3 * POOLED_MIN + 123; // a size class of its own in this file

describe("received frames: the lease rules", () => {
  it("goes back only when handled as an upstream chunk and released by every holder, once", () => {
    const a = takeFrame(N);
    const before = framesReused();
    markReusable(a);
    const release = holdFrame(a.subarray(10, 20));
    releaseFrame(a);
    expect(framesReused()).toBe(before); // still held
    release();
    release(); // a second call does nothing
    expect(framesReused()).toBe(before + 1);
    const b = takeFrame(N);
    expect(b.buffer).toBe(a.buffer); // the same memory again
    const c = takeFrame(N);
    expect(c.buffer).not.toBe(a.buffer); // given back once, handed out once
  });

  it("never goes back when not marked, or when kept for a relay queue", () => {
    const before = framesReused();
    const plain = takeFrame(N);
    releaseFrame(plain);
    const relayed = takeFrame(N);
    markReusable(relayed);
    keepFrame(relayed.subarray(5));
    releaseFrame(relayed);
    expect(framesReused()).toBe(before);
    const next = takeFrame(N);
    expect([plain.buffer, relayed.buffer]).not.toContain(next.buffer);
  });

  it("leaves small frames and foreign views alone", () => {
    const small = takeFrame(100);
    const before = framesReused();
    markReusable(small);
    holdFrame(small)();
    releaseFrame(small);
    holdFrame(Buffer.alloc(N))();
    holdFrame(undefined)();
    expect(framesReused()).toBe(before);
  });
});

describe("received frames: a broker that reads chunks late", () => {
  let b: TestBroker | undefined;
  afterEach(async () => {
    await b?.close();
    b = undefined;
  });

  const POINTS = 4;
  const SIZE = 64 * 1024;
  const CHUNKS = 40;
  /** Payload i of chunk seq: every byte says which it is. */
  const payload = (seq: number, i: number) => new Uint8Array(SIZE).fill((seq * POINTS + i) % 251);
  const sameAs = (seq: number, i: number, got: Uint8Array | null | undefined) =>
    got?.length === SIZE && got.every((x) => x === (seq * POINTS + i) % 251);

  it("stores and relays every payload intact while frames are reused", async () => {
    const stored = new Map<number, Uint8Array[]>();
    b = await startTestBroker({
      limits: { downstreamQueueBytes: 64 * 1024 * 1024, downstreamQueueChunks: 1024 },
      // As the measurement store does: hold the frame, read its views later, let go.
      onUpstreamChunk: async (_info, chunk) => {
        const raw = chunk.dataPointGroups[0]?.raw;
        const release = holdFrame(raw?.raw);
        await new Promise((r) => setTimeout(r, 20));
        const copies: Uint8Array[] = [];
        raw?.eachPayload((p) => void copies.push(Uint8Array.from(p)));
        stored.set(chunk.sequenceNumber, copies);
        release();
      },
    });
    // A downstream that does not read while the upstream sends: its queue keeps views of the frames.
    const reader = await connected(b, { nodeId: "reader" });
    reader.send({
      downstreamOpenRequest: {
        requestId: 2,
        desiredStreamIdAlias: 1,
        downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: ALL }],
        qos: iscp2.QoS.RELIABLE,
      },
    });
    const opened = (await reader.next("downstreamOpenResponse")).downstreamOpenResponse!;
    reader.ws.pause();

    const up = await connected(b);
    up.send({
      upstreamOpenRequest: {
        requestId: 2,
        sessionId: "s",
        ackInterval: 10,
        qos: iscp2.QoS.RELIABLE,
        dataIds: [{ name: "big", type: "bytes" }],
      },
    });
    await up.next("upstreamOpenResponse");
    const reused = framesReused();
    for (let seq = 1; seq <= CHUNKS; seq++) {
      const dataPoints = Array.from({ length: POINTS }, (_, i) => ({ elapsedTime: seq, payload: payload(seq, i) }));
      up.send({
        upstreamChunk: {
          streamIdAlias: 1,
          streamChunk: { sequenceNumber: seq, dataPointGroups: [{ dataIdAlias: 1, dataPoints }] },
        },
      });
      if (seq % 8 === 0) await waitFor(() => stored.size >= seq - 4, 30_000, "stored chunks");
    }
    await waitFor(() => stored.size === CHUNKS, 30_000, "every chunk stored");

    for (let seq = 1; seq <= CHUNKS; seq++)
      for (let i = 0; i < POINTS; i++)
        expect(sameAs(seq, i, stored.get(seq)![i]), `stored chunk ${seq} point ${i}`).toBe(true);

    reader.ws.resume();
    const relayed = new Map<number, Uint8Array[]>();
    await waitFor(
      () => {
        for (const m of reader.msgs.splice(0)) {
          const c = m.downstreamChunk;
          if (!c?.streamChunk) continue;
          relayed.set(
            Number(c.streamChunk.sequenceNumber),
            c.streamChunk.dataPointGroups!.flatMap((g) => g.dataPoints!.map((p) => p.payload!)),
          );
        }
        return relayed.size === CHUNKS;
      },
      30_000,
      "every chunk relayed",
    );
    for (let seq = 1; seq <= CHUNKS; seq++)
      for (let i = 0; i < POINTS; i++)
        expect(sameAs(seq, i, relayed.get(seq)![i]), `relayed chunk ${seq} point ${i}`).toBe(true);
    // Relayed frames stay with the queue; before the downstream opened nothing was relayed, so nothing was
    // reused here. Close the downstream and send more: now frames do go back.
    reader.send({ downstreamCloseRequest: { requestId: 4, streamId: opened.assignedStreamId } });
    await reader.next("downstreamCloseResponse");
    expect(b.broker.hub.downstreams.size).toBe(0);
    for (let seq = CHUNKS + 1; seq <= CHUNKS + 16; seq++) {
      const dataPoints = Array.from({ length: POINTS }, (_, i) => ({ elapsedTime: seq, payload: payload(seq, i) }));
      up.send({
        upstreamChunk: {
          streamIdAlias: 1,
          streamChunk: { sequenceNumber: seq, dataPointGroups: [{ dataIdAlias: 1, dataPoints }] },
        },
      });
    }
    await waitFor(() => stored.size === CHUNKS + 16, 30_000, "later chunks stored");
    for (let seq = CHUNKS + 1; seq <= CHUNKS + 16; seq++)
      for (let i = 0; i < POINTS; i++)
        expect(sameAs(seq, i, stored.get(seq)![i]), `stored chunk ${seq} point ${i}`).toBe(true);
    // ws's own assembly (its internals moved) would reuse nothing.
    expect(framesReused()).toBeGreaterThan(reused);
    up.ws.close();
  });
});
