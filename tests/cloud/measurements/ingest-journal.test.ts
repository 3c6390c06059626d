// A cloud peer with the ingest journal on (`ingest-journal: on`): chunks are acknowledged once the journal holds
// them and stored a moment later. What a user sees must not show that: every acknowledged chunk is listed and read
// back at once through the REST API, an upstream's close and base time land after its chunks, a measurement deleted
// mid-stream is made again, and a peer killed with SIGKILL right after its acks has every acknowledged point once
// after a restart.
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { UpstreamChunkIn } from "../../../cloud/measurements/ingest/upstream-store.js";
import { QoS } from "../../../proto/wire/message.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { freePort, killChildPeer, startChildPeer } from "./child-peer.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { edgeToken, makeEdge } from "../org/helpers.js";
import { adminCall, brokerChunkHook, ndjson, P, persistedUpstream, sequencesOf, type Call } from "./helpers.js";

const chunk = (n: number): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: [
    {
      dataId: { name: "j/v", type: "string" },
      dataPoints: [{ elapsedTime: BigInt(n) * 1000n, payload: Buffer.from(`v${n}`) }],
    },
  ],
});
/** The measurement's points' payloads as text, in time order. */
const texts = async (call: Call, meas: string) =>
  ndjson((await call(`${P}/data?name=${meas}`)).body as string).map((l) => Buffer.from(l.data.d, "base64").toString());
const journalSegments = (dataDir: string) =>
  fs.readdirSync(path.join(dataDir, "ingest-journal")).filter((f) => f.endsWith(".journal"));

describe("measurements with the ingest journal", () => {
  let peer: TestPeer;
  let call: Call;
  beforeAll(async () => {
    peer = await startTestPeer({ config: { ingestJournal: "on" } });
    call = await adminCall(peer);
  });
  afterAll(async () => peer?.stop());

  it("lists and reads back every acknowledged chunk at once", async () => {
    const up = persistedUpstream();
    const hook = brokerChunkHook(peer, up);
    expect(await hook(chunk(1))).toBeUndefined(); // makes the measurement
    const answers = await Promise.all(Array.from({ length: 299 }, (_, i) => hook(chunk(i + 2))));
    expect(answers.every((a) => a === undefined)).toBe(true);
    expect(journalSegments(peer.dataDir).length).toBeGreaterThan(0);
    // Asked right after the acks: the reads wait for the journal's apply.
    expect(await sequencesOf(call, up.sessionId)).toMatchObject([
      { uuid: up.streamId, received_chunks_count: 300, received_data_points: 300 },
    ]);
    expect(await texts(call, up.sessionId)).toEqual(Array.from({ length: 300 }, (_, i) => `v${i + 1}`));
  });

  it("stores byte for byte what an iSCP client sent, small chunks through the journal and large ones directly", async () => {
    const e = await makeEdge(call, "journal-frames");
    const token = (await edgeToken(peer, e)).body.access_token as string;
    const client = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${peer.url.replace("http", "ws")}/api/iscp/connect` }),
      token,
      nodeId: e.uuid,
      projectUuid: "00000000-0000-0000-0000-000000000000",
    });
    try {
      const session = crypto.randomUUID();
      const up = await client.openUpstream({ sessionId: session, persist: true, qos: QoS.RELIABLE });
      // Every fifth chunk is large (its frame from the broker's pool, its payloads for payload files): it is
      // committed directly, after the small chunks the journal holds before it.
      const size = (c: number) => (c % 5 === 4 ? 32 * 1024 : 100);
      const point = (c: number, i: number) => Buffer.alloc(size(c), (c * 4 + i) % 251);
      const send = (c: number) => {
        up.write(
          { name: "f/b", type: "bytes" },
          [0, 1, 2, 3].map((i) => ({ elapsedTime: BigInt(c * 4 + i), payload: point(c, i) })),
        );
        up.flush();
      };
      for (let c = 0; c < 30; c++) {
        send(c);
        if (c % 5 === 4) expect(await up.waitAcked(20_000)).toBe(true);
      }
      expect(await up.waitAcked(20_000)).toBe(true);
      const stored = ndjson((await call(`${P}/data?name=${session}`)).body as string).map((l) =>
        Buffer.from(l.data.d, "base64"),
      );
      expect(stored).toHaveLength(120);
      stored.forEach((b, k) => expect(b.equals(point(Math.floor(k / 4), k % 4)), `point ${k}`).toBe(true));
      expect(await sequencesOf(call, session)).toMatchObject([
        { received_chunks_count: 30, received_data_points: 120 },
      ]);
    } finally {
      await client.close();
    }
  });

  it("ends the measurement after its chunks, and makes one deleted mid-stream again", async () => {
    const up = persistedUpstream();
    const hook = brokerChunkHook(peer, up);
    await hook(chunk(1));
    await Promise.all([2, 3, 4].map((n) => hook(chunk(n))));
    expect((await call(`${P}/measurements/${up.sessionId}`, { method: "DELETE" })).status).toBe(204);
    await Promise.all([5, 6].map((n) => hook(chunk(n))));
    expect(await sequencesOf(call, up.sessionId)).toMatchObject([{ received_chunks_count: 2 }]);
    await Promise.all([7, 8].map((n) => hook(chunk(n))));
    await peer.svc.measurements.closeUpstream(up, {
      totalDataPoints: 4n,
      finalSequenceNumber: 8,
      closeSession: true,
    });
    expect((await call(`${P}/measurements/${up.sessionId}`)).body).toMatchObject({
      ended: true,
      sequences: { status: "completed" },
    });
  });
});

describe("a peer with the ingest journal killed with SIGKILL", () => {
  let dir: string | undefined;
  let child: ChildProcess | undefined;
  afterEach(async () => {
    await killChildPeer(child);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  const start = async (port: number) => {
    const peer = await startChildPeer(dir!, port, { PEER_CHILD_INGEST_JOURNAL: "on" });
    child = peer.child;
    return peer;
  };

  it("has every acknowledged point once after a restart", async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ingest-journal-kill-"));
    const port = await freePort();
    const first = await start(port);
    const edge = await makeEdge(first.call, "journal-edge");
    const token = (await edgeToken({ url: first.url } as TestPeer, edge)).body.access_token as string;
    const client = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${first.url.replace("http", "ws")}/api/iscp/connect` }),
      token,
      nodeId: edge.uuid,
      projectUuid: "00000000-0000-0000-0000-000000000000",
    });
    const session = crypto.randomUUID();
    const up = await client.openUpstream({ sessionId: session, persist: true, qos: QoS.RELIABLE });
    const send = (from: number, to: number) => {
      for (let n = from; n < to; n++) {
        up.write({ name: "k/v", type: "string" }, [{ elapsedTime: BigInt(n), payload: Buffer.from(`p${n}`) }]);
        up.flush();
      }
    };
    send(0, 1);
    expect(await up.waitAcked(20_000)).toBe(true); // the measurement is made
    send(1, 400);
    expect(await up.waitAcked(20_000)).toBe(true);
    await killChildPeer(child);
    await client.close().catch(() => undefined);

    const second = await start(port);
    expect(await sequencesOf(second.call, session)).toMatchObject([
      { received_chunks_count: 400, received_data_points: 400 },
    ]);
    expect(await texts(second.call, session)).toEqual(Array.from({ length: 400 }, (_, n) => `p${n}`));
  });
});
