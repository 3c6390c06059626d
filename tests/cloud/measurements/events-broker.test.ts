import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pb } from "../../../proto/gen/pb.js";
import { ResultCode } from "../../../proto/wire/message.js";
import { measurementHooks } from "../../../cloud/measurements/ingest/iscp-hooks.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  P,
  adminToken,
  chunksMessage,
  createMeasurement,
  ndjson,
  randomPoints,
  startPeerWithAdmin,
  uploadProto,
  uuid,
  type Call,
} from "./helpers.js";

/** Reads a streaming response in the background, collecting its bytes. */
function collect(res: Response) {
  const parts: Buffer[] = [];
  const reader = res.body!.getReader();
  const done = (async () => {
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (r.done) return;
      parts.push(Buffer.from(r.value!));
    }
  })();
  return {
    bytes: () => Buffer.concat(parts),
    cancel: async () => (await reader.cancel().catch(() => undefined), await done),
  };
}

async function until(cond: () => boolean | Promise<boolean>, ms = 30_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("measurements: events and the broker storage API", () => {
  let peer: TestPeer;
  let call: Call;
  let token: string;
  beforeAll(async () => ({ peer, token, admin: call } = await startPeerWithAdmin()));
  afterAll(() => peer?.stop());

  it("publishes measurement_updated as NDJSON and as framed DomainEventProto", async () => {
    const json = await peer.api(`${P}/measurements/events`, { headers: { "X-Intdash-Token": token } });
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const proto = await peer.api(`${P}/measurements/events`, {
      headers: { "X-Intdash-Token": token, accept: "application/protobuf" },
    });
    expect(proto.headers.get("content-type")).toBe("application/protobuf");
    const js = collect(json);
    const ps = collect(proto);
    await until(() => peer.svc.measurements.events.listenerCount >= 2);

    const m = await createMeasurement(call);
    await call(`${P}/measurements/${m.uuid}`, { method: "PUT", json: { name: "x" } });
    await uploadProto(call, chunksMessage(m.uuid, uuid(), [randomPoints(3)]));
    await until(() => ndjson(js.bytes().toString()).length >= 3);
    const events = ndjson(js.bytes().toString());
    for (const e of events) {
      expect(e).toMatchObject({ measUuid: m.uuid, measurementUpdated: {} });
      expect(e.occurredAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    }
    await until(() => {
      const frames = unframeEvents(ps.bytes());
      return frames.length >= 3;
    });
    const frames = unframeEvents(ps.bytes());
    expect(
      frames.every((f) => f.measUuid === m.uuid && f.measurementUpdated !== null && f.measurementUpdated !== undefined),
    ).toBe(true);
    await js.cancel();
    await ps.cancel();
    await until(() => peer.svc.measurements.events.listenerCount === 0);
  });

  it("only sends a project's events (and one measurement's with meas_uuid)", async () => {
    const a = await createMeasurement(call);
    const res = await peer.api(`${P}/measurements/events?meas_uuid=${a.uuid}`, {
      headers: { "X-Intdash-Token": token },
    });
    const s = collect(res);
    await until(() => peer.svc.measurements.events.listenerCount >= 1);
    const b = await createMeasurement(call);
    await call(`${P}/measurements/${b.uuid}/end`, { method: "PUT" });
    await call(`${P}/measurements/${a.uuid}/end`, { method: "PUT" });
    await until(() => ndjson(s.bytes().toString()).length >= 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(ndjson(s.bytes().toString()).map((e) => e.measUuid)).toEqual([a.uuid]);
    await s.cancel();
  });

  it("stores persisted upstream chunks under the session's measurement, idempotently", async () => {
    const session = uuid();
    const stream = uuid();
    const edge = uuid();
    const info = {
      streamId: stream,
      sessionId: session,
      projectUuid: "00000000-0000-0000-0000-000000000000",
      nodeId: edge,
      persist: true,
    };
    const svc = peer.svc.measurements;
    const pts = randomPoints(12, ["1/a", "1/b"], 21);
    const chunk = (n: number, points = pts.slice((n - 1) * 4, n * 4)) => ({
      sequenceNumber: n,
      dataPointGroups: points.map((p) => ({
        dataId: { name: p.name, type: p.type },
        dataPoints: [{ elapsedTime: p.elapsed, payload: p.payload }],
      })),
    });
    // Concurrent chunks are group-committed; a repeated sequence number is skipped.
    const results = await Promise.all([
      svc.storeUpstreamChunk(info, chunk(1)),
      svc.storeUpstreamChunk(info, chunk(2)),
      svc.storeUpstreamChunk(info, chunk(2)),
    ]);
    expect(results).toEqual(["ok", "ok", "skipped"]);
    await svc.storeBaseTime(
      { projectUuid: info.projectUuid, nodeId: edge, persist: true },
      { sessionId: session, name: "edge_rtc", priority: 20, elapsedTime: 0n, baseTime: 1_767_323_045_000_000_001n },
    );
    let m = (await call(`${P}/measurements/${session}`)).body;
    expect(m).toMatchObject({
      uuid: session,
      edge_uuid: edge,
      basetime_type: "edge_rtc",
      basetime: "2026-01-02T03:04:05.000000001Z",
      sequences: { status: "measuring", received_data_points: 8 },
    });
    const bts = (await call(`${P}/measurements/${session}/basetimes`)).body.items.map((b: any) => b.type).sort();
    expect(bts).toEqual(["api_first_received", "edge_rtc"]);

    expect(await svc.storeUpstreamChunk(info, chunk(3))).toBe("ok");
    await svc.closeUpstream(info, { totalDataPoints: 12n, finalSequenceNumber: 3, closeSession: true });
    m = (await call(`${P}/measurements/${session}`)).body;
    expect(m).toMatchObject({
      ended: true,
      completed: true,
      sequences: { status: "completed", received_data_points: 12, expected_data_points: 12 },
    });
    const seq = (await call(`${P}/measurements/${session}/sequences/${stream}`)).body;
    expect(seq).toMatchObject({ received_chunks_count: 3, final_sequence_number: 3 });

    // Read back through the data endpoint.
    const res = await peer.api(`${P}/data?name=${session}&time_format=ns`, { headers: { "X-Intdash-Token": token } });
    const lines = ndjson(await res.text());
    expect(lines.map((l) => Buffer.from(l.data.d, "base64").toString("hex"))).toEqual(
      [...pts].sort((x, y) => (x.elapsed < y.elapsed ? -1 : 1)).map((p) => Buffer.from(p.payload).toString("hex")),
    );

    // Not persisted: nothing stored.
    expect(await svc.storeUpstreamChunk({ ...info, sessionId: uuid(), persist: false }, chunk(1))).toBe(
      "not_persisted",
    );
  });

  it("gives the broker hooks iSCP result codes for sessions it cannot store", async () => {
    const hooks = measurementHooks(peer.svc.measurements);
    const base = {
      streamId: uuid(),
      projectUuid: "00000000-0000-0000-0000-000000000000",
      nodeId: uuid(),
      persist: true,
      subject: { kind: "edge" as const, uuid: uuid() },
      qos: 1,
    };
    expect(await hooks.onUpstreamOpen({ ...base, sessionId: "not-a-uuid" })).toMatchObject({
      resultCode: ResultCode.SESSION_NOT_FOUND,
    });
    expect(await hooks.onUpstreamOpen({ ...base, sessionId: uuid() })).toBeUndefined();
    // The node id becomes the measurement's edge_uuid: a persisted upstream needs a UUID there.
    expect(await hooks.onUpstreamOpen({ ...base, nodeId: "my-laptop", sessionId: uuid() })).toMatchObject({
      resultCode: ResultCode.NO_NODE_ID,
    });
    const laptop = { projectUuid: base.projectUuid, nodeId: "my-laptop", subject: base.subject, persist: true };
    const fresh = uuid();
    expect(
      await hooks.onUpstreamMetadata(laptop, {
        sessionId: fresh,
        name: "edge_rtc",
        priority: 20,
        elapsedTime: 0n,
        baseTime: 1n,
      }),
    ).toMatchObject({ resultCode: ResultCode.NO_NODE_ID });
    expect((await call(`${P}/measurements/${fresh}`)).status).toBe(404);
    // A measurement of another project with the same UUID is refused.
    const other = await createMeasurement(call);
    const r = await hooks.onUpstreamChunk(
      { ...base, projectUuid: uuid(), sessionId: other.uuid },
      {
        sequenceNumber: 1,
        dataPointGroups: [
          { dataId: { name: "a", type: "bytes" }, dataPoints: [{ elapsedTime: 1n, payload: new Uint8Array([1]) }] },
        ],
      },
    );
    expect(r).toMatchObject({ resultCode: ResultCode.SESSION_NOT_FOUND });
    // The open is refused at once for such a session, not chunk by chunk.
    expect(await hooks.onUpstreamOpen({ ...base, projectUuid: uuid(), sessionId: other.uuid })).toMatchObject({
      resultCode: ResultCode.SESSION_NOT_FOUND,
    });
    // A session persisted by (or created for) another node: NODE_ID_MISMATCH, at open, per chunk and for base times.
    const chunk1 = {
      sequenceNumber: 1,
      dataPointGroups: [
        { dataId: { name: "a", type: "bytes" }, dataPoints: [{ elapsedTime: 1n, payload: new Uint8Array([1]) }] },
      ],
    };
    expect(await hooks.onUpstreamOpen({ ...base, sessionId: other.uuid })).toMatchObject({
      resultCode: ResultCode.NODE_ID_MISMATCH,
    });
    expect(await hooks.onUpstreamChunk({ ...base, sessionId: other.uuid }, chunk1)).toMatchObject({
      resultCode: ResultCode.NODE_ID_MISMATCH,
    });
    // A persisted chunk whose session id is no UUID is refused (each time: the check is kept per stream).
    const notUuid = { ...base, sessionId: "not-a-uuid" };
    for (let i = 0; i < 2; i++)
      expect(await hooks.onUpstreamChunk(notUuid, chunk1)).toMatchObject({ resultCode: ResultCode.SESSION_NOT_FOUND });
    const bt = { sessionId: other.uuid, name: "ntp", priority: 40, elapsedTime: 0n, baseTime: 1n };
    const meta = { projectUuid: base.projectUuid, nodeId: base.nodeId, subject: base.subject, persist: true };
    expect(await hooks.onUpstreamMetadata(meta, bt)).toMatchObject({ resultCode: ResultCode.NODE_ID_MISMATCH });
    // Its own node (the measurement's edge, any letter case) may.
    const own = { ...base, nodeId: other.edge_uuid.toUpperCase(), sessionId: other.uuid };
    expect(await hooks.onUpstreamOpen(own)).toBeUndefined();
    expect(await hooks.onUpstreamChunk(own, chunk1)).toBeUndefined();
    expect(await hooks.onUpstreamMetadata({ ...meta, nodeId: own.nodeId }, bt)).toBeUndefined();
    expect((await call(`${P}/measurements/${other.uuid}/sequences`)).body.items).toHaveLength(1);
  });
});

function unframeEvents(buf: Buffer): pb.DomainEventProto[] {
  const out: pb.DomainEventProto[] = [];
  for (let off = 0; off + 8 <= buf.length; ) {
    const len = Number(buf.readBigUInt64LE(off));
    if (off + 8 + len > buf.length) break;
    if (len > 0) out.push(pb.DomainEventProto.decode(buf.subarray(off + 8, off + 8 + len)));
    off += 8 + len;
  }
  return out;
}

describe("measurements: event streams at shutdown", () => {
  it("ends open event streams so the peer can stop", async () => {
    const peer = await startTestPeer();
    const token = await adminToken(peer);
    const res = await peer.api(`${P}/measurements/events`, { headers: { "X-Intdash-Token": token } });
    expect(res.status).toBe(200);
    const s = collect(res);
    await until(() => peer.svc.measurements.events.listenerCount >= 1);
    // An event stream left open would hold the stop until the test's timeout.
    await peer.stop();
    await s.cancel();
  });
});
