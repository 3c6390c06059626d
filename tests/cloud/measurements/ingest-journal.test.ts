// A cloud peer with the ingest journal on (`ingest-journal: on`): chunks are acknowledged once the journal holds
// them and stored a moment later. What a user sees must not show that: every acknowledged chunk is listed and read
// back at once through the REST API, an upstream's close and base time land after its chunks, a measurement deleted
// mid-stream is made again, and a peer killed with SIGKILL right after its acks has every acknowledged point once
// after a restart, with the journal on or turned off meanwhile.
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
import {
  adminCall,
  brokerChunkHook,
  chunksMessage,
  ndjson,
  P,
  persistedUpstream,
  sequencesOf,
  uploadProto,
  type Call,
} from "./helpers.js";

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

  it("stores a number sent again, in real time or by REST, once, and counts it once", async () => {
    const up = persistedUpstream();
    const hook = brokerChunkHook(peer, up);
    await hook(chunk(1));
    expect(await Promise.all([2, 3].map((n) => hook(chunk(n))))).toEqual([undefined, undefined]);
    // Asked right after those acks, while the journal may still hold them: the upload sees them stored.
    const rest = [2, 3, 4].map((n) => [
      { name: "j/v", type: "string", elapsed: BigInt(n) * 1000n, payload: Buffer.from(`rest${n}`) },
    ]);
    expect((await uploadProto(call, chunksMessage(up.sessionId, up.streamId, rest, 2))).body.items).toEqual([
      { sequence_number: 2, result: "skipped" },
      { sequence_number: 3, result: "skipped" },
      { sequence_number: 4, result: "ok" },
    ]);
    expect(await Promise.all([3, 4, 5, 5].map((n) => hook(chunk(n))))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(await sequencesOf(call, up.sessionId)).toMatchObject([
      { received_chunks_count: 5, received_data_points: 5 },
    ]);
    expect(await texts(call, up.sessionId)).toEqual(["v1", "v2", "v3", "rest4", "v5"]);
  });

  it("keeps acknowledged chunks a full database cannot take, and stores them once there is room", async () => {
    const up = persistedUpstream();
    const hook = brokerChunkHook(peer, up);
    await hook(chunk(1));
    const { n } = (await peer.svc.db.get<{ n: number }>("SELECT page_count AS n FROM pragma_page_count()"))!;
    await peer.svc.db.exec(`PRAGMA max_page_count = ${n}`);
    try {
      // The journal takes them (its file system has room); their apply to cloud.db fails and is tried again.
      const big = (k: number): UpstreamChunkIn => ({
        sequenceNumber: k,
        dataPointGroups: [
          {
            dataId: { name: "j/v", type: "string" },
            dataPoints: [{ elapsedTime: BigInt(k) * 1000n, payload: Buffer.alloc(8 * 1024, k) }],
          },
        ],
      });
      const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => hook(big(i + 2))));
      expect(answers.every((a) => a === undefined)).toBe(true);
      // A read waits for them at most 5 s, then answers what cloud.db holds.
      expect(await sequencesOf(call, up.sessionId)).toMatchObject([{ received_chunks_count: 1 }]);
    } finally {
      await peer.svc.db.exec("PRAGMA max_page_count = 1073741823");
    }
    expect(await sequencesOf(call, up.sessionId)).toMatchObject([
      { received_chunks_count: 301, received_data_points: 301 },
    ]);
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
  const start = async (port: number, journal: "on" | "off" = "on") => {
    const peer = await startChildPeer(dir!, port, { PEER_CHILD_INGEST_JOURNAL: journal });
    child = peer.child;
    return peer;
  };

  it.each(["on", "off"] as const)(
    "has every acknowledged point once after a restart with the journal %s",
    async (then) => {
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

      const second = await start(port, then);
      expect(await sequencesOf(second.call, session)).toMatchObject([
        { received_chunks_count: 400, received_data_points: 400 },
      ]);
      expect(await texts(second.call, session)).toEqual(Array.from({ length: 400 }, (_, n) => `p${n}`));
    },
  );
});
