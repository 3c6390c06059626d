import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestPeer } from "../harness.js";
import { parseTimeNs } from "../../../cloud/measurements/formats/time.js";
import {
  BASETIME,
  P,
  chunksMessage,
  createMeasurement,
  expectError,
  jsonBody,
  ndjson,
  randomPoints,
  startPeerWithAdmin,
  unframe,
  uploadProto,
  uuid,
  type Call,
  type TestPoint,
} from "./helpers.js";

const BASE_NS = parseTimeNs(BASETIME)!;

/** Points in the order the data endpoint must return them (time, then sequence/chunk/group/point order). */
function expectedOrder(points: TestPoint[]): TestPoint[] {
  return points
    .map((p, i) => ({ p, i }))
    .sort((a, b) => (a.p.elapsed < b.p.elapsed ? -1 : a.p.elapsed > b.p.elapsed ? 1 : a.i - b.i))
    .map((x) => x.p);
}

describe("measurements: chunk upload and data read-back", () => {
  let peer: TestPeer;
  let call: Call;
  let token: string;
  beforeAll(async () => ({ peer, token, admin: call } = await startPeerWithAdmin()));
  afterAll(() => peer?.stop());

  async function data(query: string, accept?: string) {
    const res = await peer.api(`${P}/data?${query}`, {
      headers: { "X-Intdash-Token": token, ...(accept ? { accept } : {}) },
    });
    return res;
  }

  it("stores protobuf StoreDataChunks, answers ok per chunk, then skipped on a second upload", async () => {
    const m = await createMeasurement(call);
    const seq = uuid();
    const msg = chunksMessage(m.uuid, seq, [randomPoints(5, ["1/a"], 1), randomPoints(3, ["1/a"], 2)]);
    const first = await uploadProto(call, msg);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({
      items: [
        { sequence_number: 1, result: "ok" },
        { sequence_number: 2, result: "ok" },
      ],
      total_count: 2,
    });
    const again = await uploadProto(call, msg);
    expect(again.body).toEqual({
      items: [
        { sequence_number: 1, result: "skipped" },
        { sequence_number: 2, result: "skipped" },
      ],
      total_count: 2,
    });
    const s = await call(`${P}/measurements/${m.uuid}/sequences/${seq}`);
    expect(s.body).toMatchObject({ uuid: seq, received_data_points: 8, received_chunks_count: 2 });
    const got = await call(`${P}/measurements/${m.uuid}`);
    expect(got.body).toMatchObject({
      received_data_points: 8,
      sequences: { status: "measuring", received_data_points: 8 },
    });
  });

  it("takes the JSON form too (camelCase or snake_case), with the same idempotency", async () => {
    const m = await createMeasurement(call);
    const seq = uuid();
    const msg = chunksMessage(m.uuid, seq, [randomPoints(4, ["x"], 3)]);
    const body = jsonBody(msg);
    const r = await call(`${P}/measurements/sequences/chunks`, { method: "POST", json: body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.items).toEqual([{ sequence_number: 1, result: "ok" }]);
    const snake = {
      meas_uuid: body.measUuid,
      sequence_uuid: body.sequenceUuid,
      chunks: body.chunks.map((c) => ({
        sequence_number: c.sequenceNumber,
        data_point_groups: c.dataPointGroups.map((g) => ({
          data_id: g.dataId,
          data_points: g.dataPoints.map((p) => ({ elapsed_time: p.elapsedTime, payload: p.payload })),
        })),
      })),
    };
    const again = await call(`${P}/measurements/sequences/chunks`, { method: "POST", json: snake });
    expect(again.body.items).toEqual([{ sequence_number: 1, result: "skipped" }]);
    // Legacy path, default project.
    const legacy = await call(`/v1/measurements/sequences/chunks`, { method: "POST", json: body });
    expect(legacy.body.items).toEqual([{ sequence_number: 1, result: "skipped" }]);
  });

  it("reads the points back byte for byte as NDJSON and as length-prefixed DataResponseProto", async () => {
    const m = await createMeasurement(call);
    // Two sequences whose chunks interleave in time, several data IDs, out-of-order points within chunks.
    const a = randomPoints(60, ["1/a", "2/b"], 7);
    const b = randomPoints(40, ["3/c"], 9).map((p) => ({ ...p, elapsed: p.elapsed + 500_000n }));
    const seqA = uuid();
    const seqB = uuid();
    const split = (pts: TestPoint[], n: number) =>
      Array.from({ length: Math.ceil(pts.length / n) }, (_, i) => pts.slice(i * n, i * n + n).reverse());
    expect((await uploadProto(call, chunksMessage(m.uuid, seqA, split(a, 7)))).status).toBe(200);
    expect((await uploadProto(call, chunksMessage(m.uuid, seqB, split(b, 6)))).status).toBe(200);
    const all = expectedOrder([...a, ...b]);

    const j = await data(`name=${m.uuid}&time_format=ns`);
    expect(j.status).toBe(200);
    expect(j.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const lines = ndjson(await j.text());
    expect(lines).toHaveLength(all.length);
    const text = await (await data(`name=${m.uuid}&time_format=ns`)).text();
    lines.forEach((l, i) => {
      const p = all[i]!;
      expect(l.measurement_uuid).toBe(m.uuid);
      expect(l.data_type).toBe(p.type);
      expect(l.data_id).toBe(p.name);
      expect(Buffer.from(l.data.d, "base64").equals(Buffer.from(p.payload))).toBe(true);
      expect(typeof l.created_at).toBe("string");
    });
    // ns times are exact: read them from the raw text (JSON.parse rounds past 2^53).
    const times = [...text.matchAll(/"time":(\d+)/g)].map((x) => BigInt(x[1]!));
    expect(times).toEqual(all.map((p) => BASE_NS + p.elapsed));

    const pbRes = await data(`name=${m.uuid}`, "application/protobuf");
    expect(pbRes.status).toBe(200);
    expect(pbRes.headers.get("content-type")).toBe("application/protobuf");
    const msgs = unframe(Buffer.from(await pbRes.arrayBuffer()));
    expect(msgs).toHaveLength(all.length);
    msgs.forEach((d, i) => {
      const p = all[i]!;
      expect(Buffer.from(d.dataPayload).equals(Buffer.from(p.payload))).toBe(true);
      expect(d.dataType).toBe(p.type);
      expect(d.dataId).toBe(p.name);
      expect(d.dataName).toBe(p.name);
      expect(d.measurementUuid).toBe(m.uuid);
      const ns = BigInt(d.time!.seconds!.toString()) * 1_000_000_000n + BigInt(d.time!.nanos ?? 0);
      expect(ns).toBe(BASE_NS + p.elapsed);
    });
  });

  it("filters by idq, start/end, limit and order and formats times", async () => {
    const m = await createMeasurement(call);
    const pts = randomPoints(30, ["1/a", "1/b", "2/c"], 11);
    await uploadProto(call, chunksMessage(m.uuid, uuid(), [pts.slice(0, 10), pts.slice(10, 20), pts.slice(20)]));
    const all = expectedOrder(pts);

    const onlyA = ndjson(await (await data(`name=${m.uuid}&idq[]=${encodeURIComponent("*:1/a")}`)).text());
    expect(onlyA.map((l) => l.data_id)).toEqual(all.filter((p) => p.name === "1/a").map((p) => p.name));
    const bytes = ndjson(await (await data(`name=${m.uuid}&idq[]=bytes`)).text());
    expect(bytes).toHaveLength(all.filter((p) => p.type === "bytes").length);
    const two = ndjson(
      await (
        await data(`name=${m.uuid}&idq[]=${encodeURIComponent("float64:1/*")}&idq[]=${encodeURIComponent("bytes:2/c")}`)
      ).text(),
    );
    expect(two).toHaveLength(
      all.filter((p) => (p.type === "float64" && p.name.startsWith("1/")) || (p.type === "bytes" && p.name === "2/c"))
        .length,
    );

    const desc = ndjson(await (await data(`name=${m.uuid}&order=desc&limit=5&time_format=ns`)).text());
    expect(desc.map((l) => Buffer.from(l.data.d, "base64").toString("hex"))).toEqual(
      [...all]
        .reverse()
        .slice(0, 5)
        .map((p) => Buffer.from(p.payload).toString("hex")),
    );

    // Window [10 ms, 20 ms) after the base time.
    const startIso = new Date(Number((BASE_NS + 10_000_000n) / 1_000_000n)).toISOString();
    const endIso = new Date(Number((BASE_NS + 20_000_000n) / 1_000_000n)).toISOString();
    const win = ndjson(await (await data(`name=${m.uuid}&start=${startIso}&end=${endIso}`)).text());
    const from = ((BASE_NS + 10_000_000n) / 1_000_000n) * 1_000_000n - BASE_NS;
    const to = ((BASE_NS + 20_000_000n) / 1_000_000n) * 1_000_000n - BASE_NS;
    expect(win).toHaveLength(all.filter((p) => p.elapsed >= from && p.elapsed < to).length);

    const rfc = ndjson(await (await data(`name=${m.uuid}&limit=1&time_format=rfc3339`)).text());
    expect(rfc[0].time).toMatch(/^2026-01-02T03:04:05\.\d{9}Z$/);
    const us = ndjson(await (await data(`name=${m.uuid}&limit=1`)).text());
    expect(us[0].time).toBe(Number((BASE_NS + all[0]!.elapsed) / 1000n));
    const ms = ndjson(await (await data(`name=${m.uuid}&limit=1&time_format=ms`)).text());
    expect(ms[0].time).toBe(Number((BASE_NS + all[0]!.elapsed) / 1_000_000n));

    const ids = await call(`${P}/data_ids?name=${m.uuid}`);
    expect(ids.status).toBe(200);
    expect(ids.body).toEqual({
      items: [...new Set(pts.map((p) => `${p.type}\u0000${p.name}`))]
        .sort()
        .map((k) => ({ data_type: k.split("\u0000")[0], data_id: k.split("\u0000")[1] })),
    });
    expectError(await call(`${P}/data_ids`), 400, "invalid_request");

    const byEdge = ndjson(await (await data(`name=${m.edge_uuid}&limit=3`)).text());
    expect(byEdge).toHaveLength(3);
    const none = await data(`name=${uuid()}`);
    expect(none.status).toBe(200);
    expect(await none.text()).toBe("");
  });

  it("reports a chunk it cannot decode in-band and goes on, or stops with exit_on_error", async () => {
    const m = await createMeasurement(call);
    const pts = randomPoints(9, ["1/a"], 13);
    await uploadProto(call, chunksMessage(m.uuid, uuid(), [pts.slice(0, 3), pts.slice(3, 6), pts.slice(6)]));
    // Damage the stored second chunk (as a disk fault would).
    await peer.svc.db.run(
      "UPDATE meas_chunk_payloads SET payload = ? WHERE sequence_number = 2 AND sequence_id IN (SELECT id FROM meas_sequences WHERE measurement_uuid = ?)",
      [Buffer.from([0x12, 0xff]), m.uuid],
    );
    const lines = ndjson(await (await data(`name=${m.uuid}`)).text());
    const errors = lines.filter((l) => l.data_id === "intdash/measurement/get/data/error");
    expect(errors).toHaveLength(1);
    expect(errors[0].data.error).toBe("unexpected");
    expect(lines.filter((l) => l.data_id === "1/a")).toHaveLength(6);
    const stopped = ndjson(await (await data(`name=${m.uuid}&exit_on_error=true`)).text());
    expect(stopped.filter((l) => l.data_id === "1/a")).toHaveLength(3);
    expect(stopped[stopped.length - 1].data_id).toBe("intdash/measurement/get/data/error");
  });

  it("answers bad uploads and queries with 400/415 in the error shape, never 500", async () => {
    const m = await createMeasurement(call);
    const url = `${P}/measurements/sequences/chunks`;
    /** An upload of one chunk holding one data point. */
    const onePoint = (dataPoint: { elapsed_time: string; payload: string }) => ({
      meas_uuid: m.uuid,
      sequence_uuid: uuid(),
      chunks: [
        { sequence_number: 1, data_point_groups: [{ data_id: { name: "a", type: "b" }, data_points: [dataPoint] }] },
      ],
    });
    const cases = [
      await call(url, {
        method: "POST",
        headers: { "content-type": "application/vnd.iscp.v2.protobuf" },
        body: Buffer.from([0xff, 0xff, 0xff, 0x0f, 0x01]),
      }),
      await call(url, { method: "POST", json: { meas_uuid: "x", sequence_uuid: uuid(), chunks: [] } }),
      await call(url, {
        method: "POST",
        json: { meas_uuid: m.uuid, sequence_uuid: uuid(), chunks: [{ sequence_number: 0 }] },
      }),
      await call(url, { method: "POST", json: onePoint({ elapsed_time: "x1", payload: "AA==" }) }),
      await call(url, { method: "POST", json: onePoint({ elapsed_time: "1", payload: "!!" }) }),
      await call(url, { method: "POST", headers: { "content-type": "application/json" }, body: "[1," }),
      await call(`${P}/data`),
      await call(`${P}/data?name=${m.uuid}&order=sideways`),
      await call(`${P}/data?name=${m.uuid}&time_format=fortnights`),
      await call(`${P}/data?name=${m.uuid}&start=noon`),
      await call(`${P}/data?name=${m.uuid}&limit=-3`),
    ];
    for (const r of cases) expectError(r, 400, "invalid_request");
    expectError(
      await call(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "hello" }),
      415,
      "unsupported_media_type",
    );
    // An unknown measurement is 404.
    expectError(await uploadProto(call, chunksMessage(uuid(), uuid(), [randomPoints(1)])), 404, "not_found");
  });
});
