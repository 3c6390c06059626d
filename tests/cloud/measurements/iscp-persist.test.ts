// The published client @aptpod/iscp-ts streams a persisted upstream through the real cloud peer;
// the measurement, its sequence and every byte come back through the REST API.
import * as iscp from "@aptpod/iscp-ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import { framesReused } from "../../../proto/transport/received-frames.js";
import { QoS } from "../../../proto/wire/message.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { edgeToken, makeEdge } from "../org/helpers.js";
import { P, adminToken, caller, ndjson, unframe, uuid, type Call } from "./helpers.js";

describe("measurements: a persisted iscp-ts upstream", () => {
  let peer: TestPeer;
  let admin: Call;
  let token: string;
  let edge: { uuid: string; token: string };
  const conns: iscp.Conn[] = [];

  beforeAll(async () => {
    peer = await startTestPeer();
    token = await adminToken(peer);
    admin = caller(peer, token);
    const e = await makeEdge(admin, "persist-edge");
    edge = { uuid: e.uuid, token: (await edgeToken(peer, e)).body.access_token };
  });
  afterAll(async () => {
    await Promise.allSettled(conns.map((c) => c.close()));
    await peer.stop();
  });

  it("stores large points byte for byte while the broker reuses their frames' buffers", async () => {
    // The agent's client sends each chunk as one WebSocket frame of ~256 KiB here. The broker assembles such
    // frames in pooled buffers (received-frames.ts), and the store reads their views batches later: a buffer
    // reused too early would store another chunk's bytes.
    const client = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${peer.url.replace("http", "ws")}/api/iscp/connect` }),
      token: edge.token,
      nodeId: edge.uuid,
      projectUuid: "00000000-0000-0000-0000-000000000000",
    });
    const session = uuid();
    await client.sendBaseTime(
      { sessionId: session, name: "edge_rtc", priority: 20, elapsedTime: 0n, baseTime: 1_767_323_045_000_000_000n },
      true,
    );
    const up = await client.openUpstream({ sessionId: session, persist: true, qos: QoS.RELIABLE });
    const reused = framesReused();
    const CHUNKS = 48;
    const POINTS = 4;
    const fill = (c: number, i: number) => (c * POINTS + i) % 251;
    for (let c = 0; c < CHUNKS; c++) {
      up.write(
        { name: "big", type: "bytes" },
        Array.from({ length: POINTS }, (_, i) => ({
          elapsedTime: BigInt(c * POINTS + i) * 1000n,
          payload: new Uint8Array(64 * 1024).fill(fill(c, i)),
        })),
      );
      up.flush();
    }
    expect(await up.waitAcked(20_000)).toBe(true);
    await up.close();
    await client.close();
    await peer.svc.measurements.upstream.drain();
    // node:http, not fetch: this file imports @aptpod/iscp-ts, whose web-streams polyfill replaces the globals
    // Node's fetch reads bodies with, and fetch then stalls on a body this size (docs/iscp.md).
    const body = await new Promise<Buffer>((resolve, reject) => {
      const req = http.get(
        `${peer.url}/api${P}/data?name=${session}`,
        { headers: { "X-Intdash-Token": token, accept: "application/protobuf" } },
        (res) => {
          const parts: Buffer[] = [];
          res.on("data", (d: Buffer) => parts.push(d));
          res.on("end", () => resolve(Buffer.concat(parts)));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
    });
    const payloads = unframe(body).map((f) => Buffer.from(f.dataPayload));
    expect(payloads).toHaveLength(CHUNKS * POINTS);
    const wrong = payloads.flatMap((p, k) =>
      p.length === 64 * 1024 && p.every((x) => x === fill(Math.floor(k / POINTS), k % POINTS)) ? [] : [k],
    );
    expect(wrong).toEqual([]);
    // ws's own assembly (were its internals to move) would reuse none.
    expect(framesReused()).toBeGreaterThan(reused);
  });

  for (const encoding of ["proto", "json"] as const) {
    it(`stores what was sent, byte for byte, and completes on close_session (enc=${encoding})`, async () => {
      const conn = await iscp.Conn.connect({
        address: peer.url.replace("http://", ""),
        connector: new iscp.WebSocketConnector({ enableTLS: false }),
        tokenSource: async () => edge.token,
        nodeId: edge.uuid,
        projectUuid: "00000000-0000-0000-0000-000000000000",
        encoding,
        logLevel: iscp.LOG_LEVEL.NONE,
      } as ConstructorParameters<typeof Object>[0]);
      conns.push(conn);
      const session = uuid();
      const baseNs = 1_767_323_045_123_456_789n;
      await conn.sendBaseTime(
        new iscp.BaseTime({ sessionId: session, name: "edge_rtc", priority: 20, elapsedTime: 0n, baseTime: baseNs }),
        { persist: true },
      );
      const up = await conn.openUpstream({
        sessionId: session,
        persist: true,
        qos: iscp.QOS.RELIABLE,
        closeSession: true,
      });
      const sent: Array<{ name: string; type: string; elapsed: bigint; payload: Uint8Array }> = [];
      for (let c = 0; c < 5; c++) {
        for (const [name, type] of [
          ["1/can", "can_frame"],
          ["2/gnss", "float64_array"],
        ] as const) {
          const pts = Array.from({ length: 4 }, (_, i) => {
            const payload = new Uint8Array(8 + c + i).map((_, k) => (k * 31 + c * 7 + i) & 0xff);
            const elapsed = BigInt(c * 10 + i) * 1_000_000n + (name === "2/gnss" ? 500n : 0n);
            sent.push({ name, type, elapsed, payload });
            return new iscp.DataPoint({ elapsedTime: elapsed, payload });
          });
          await up.writeDataPoints(new iscp.DataId({ name, type }), pts);
        }
        await up.flush();
      }
      await up.close();
      // The broker runs its close hook after answering the client: wait for the stored close.
      const deadline = Date.now() + 5000;
      let m = (await admin(`${P}/measurements/${session}`)).body;
      while (!m.ended && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        m = (await admin(`${P}/measurements/${session}`)).body;
      }
      await peer.svc.measurements.upstream.drain();
      m = (await admin(`${P}/measurements/${session}`)).body;
      expect(m).toMatchObject({
        uuid: session,
        edge_uuid: edge.uuid,
        basetime_type: "edge_rtc",
        basetime: "2026-01-02T03:04:05.123456789Z",
        ended: true,
        completed: true,
        sequences: { status: "completed", received_data_points: sent.length, expected_data_points: sent.length },
      });
      const seqs = (await admin(`${P}/measurements/${session}/sequences`)).body;
      expect(seqs.items).toHaveLength(1);
      expect(seqs.items[0]).toMatchObject({
        received_data_points: sent.length,
        received_chunks_count: 5,
        final_sequence_number: 5,
      });

      const order = [...sent].sort((a, b) => (a.elapsed < b.elapsed ? -1 : a.elapsed > b.elapsed ? 1 : 0));
      const res = await fetch(`${peer.url}/api${P}/data?name=${session}&time_format=ns`, {
        headers: { "X-Intdash-Token": token },
      });
      const text = await res.text();
      const lines = ndjson(text);
      expect(lines.map((l) => [l.data_type, l.data_id, Buffer.from(l.data.d, "base64").toString("hex")])).toEqual(
        order.map((p) => [p.type, p.name, Buffer.from(p.payload).toString("hex")]),
      );
      expect([...text.matchAll(/"time":(\d+)/g)].map((x) => BigInt(x[1]!) - baseNs)).toEqual(
        order.map((p) => p.elapsed),
      );

      const pbRes = await fetch(`${peer.url}/api${P}/data?name=${session}`, {
        headers: { "X-Intdash-Token": token, accept: "application/protobuf" },
      });
      const frames = unframe(Buffer.from(await pbRes.arrayBuffer()));
      expect(frames.map((f) => Buffer.from(f.dataPayload).toString("hex"))).toEqual(
        order.map((p) => Buffer.from(p.payload).toString("hex")),
      );
    });
  }
});
