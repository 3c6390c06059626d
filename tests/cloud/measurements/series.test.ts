// The reduced series endpoint: min/max per time bucket of one numeric data ID, for plots.
import { describe, expect, it } from "vitest";
import { json, makeUser, READ_ONLY } from "../org/helpers.js";
import {
  chunksMessage,
  createMeasurement,
  expectError,
  P,
  uploadProto,
  uuid,
  withPeer,
  type TestPoint,
} from "./helpers.js";

const f64 = (v: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b;
};
const i64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(v);
  return b;
};
const MS = 1_000_000n;

describe("reduced series", () => {
  const ctx = withPeer();

  async function measurementWith(points: TestPoint[][]) {
    const m = await createMeasurement(ctx.call);
    const up = await uploadProto(ctx.call, chunksMessage(m.uuid, uuid(), points));
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    return m.uuid as string;
  }

  it("reduces 10,000 points across chunks to min and max (with their times) per bucket", async () => {
    // A sine over 10 s, 1 ms apart, in 10 chunks; one spike per second.
    const chunks: TestPoint[][] = [];
    for (let c = 0; c < 10; c++) {
      const pts: TestPoint[] = [];
      for (let i = c * 1000; i < (c + 1) * 1000; i++)
        pts.push({
          name: "v/sine",
          type: "float64",
          elapsed: BigInt(i) * MS,
          payload: f64(i % 1000 === 500 ? 100 : Math.sin(i / 100)),
        });
      pts.push({ name: "v/other", type: "float64", elapsed: BigInt(c) * MS, payload: f64(-1000) });
      chunks.push(pts.reverse());
    }
    const m = await measurementWith(chunks);
    const r = await ctx.call(`${P}/measurements/${m}/series?data_type=float64&data_id=v/sine&buckets=10`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      measurement_uuid: m,
      data_type: "float64",
      data_id: "v/sine",
      basetime: "2026-01-02T03:04:05.123456789Z",
      bucket_count: 10,
      point_count: 10_000,
      skipped_count: 0,
    });
    const b = r.body.buckets;
    expect(b.count).toEqual(Array(10).fill(1000));
    expect(b.max).toEqual(Array(10).fill(100));
    expect(b.time_max).toEqual([0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5]);
    for (const v of b.min) expect(v).toBeGreaterThanOrEqual(-1);
    expect(Math.min(...b.min)).toBeCloseTo(-1, 3);

    // A window [2 s, 4 s) in 4 buckets: the finer slice a zoom asks for.
    const start = "2026-01-02T03:04:07.123456789Z";
    const end = "2026-01-02T03:04:09.123456789Z";
    const z = await ctx.call(
      `${P}/measurements/${m}/series?data_type=float64&data_id=v/sine&buckets=4&start=${start}&end=${end}`,
    );
    expect(z.body).toMatchObject({ start, end, point_count: 2000 });
    expect(z.body.buckets.count).toEqual([500, 500, 500, 500]);
    expect([
      z.body.buckets.max[1],
      z.body.buckets.time_max[1],
      z.body.buckets.max[3],
      z.body.buckets.time_max[3],
    ]).toEqual([100, 2.5, 100, 3.5]);
    expect(Math.max(z.body.buckets.max[0], z.body.buckets.max[2])).toBeLessThanOrEqual(1);
  });

  it("reads big-endian integers and numeric JSON fields, and counts payloads that are not numbers", async () => {
    const m = await measurementWith([
      [
        { name: "n", type: "int64", elapsed: 0n, payload: i64(-5n) },
        { name: "n", type: "int64", elapsed: 1n * MS, payload: i64(7n) },
        { name: "n", type: "int64", elapsed: 2n * MS, payload: Buffer.from("bad") },
        { name: "j", type: "json", elapsed: 0n, payload: Buffer.from('{"a":{"b":3}}') },
        { name: "j", type: "json", elapsed: 1n * MS, payload: Buffer.from('{"a":{"b":"x"}}') },
      ],
    ]);
    const n = await ctx.call(`${P}/measurements/${m}/series?data_type=int64&data_id=n&buckets=1`);
    expect(n.body).toMatchObject({
      point_count: 2,
      skipped_count: 1,
      buckets: { min: [-5], max: [7], time_min: [0], time_max: [0.001], count: [2] },
    });
    const j = await ctx.call(`${P}/measurements/${m}/series?data_type=json&data_id=j&field=/a/b&buckets=5`);
    expect(j.body).toMatchObject({ point_count: 1, skipped_count: 1, buckets: { min: [3], max: [3], count: [1] } });
  });

  it("refuses bad input with {type, title} and unknown measurements with 404", async () => {
    const m = await measurementWith([[{ name: "s", type: "string", elapsed: 0n, payload: Buffer.from("hi") }]]);
    const base = `${P}/measurements/${m}/series`;
    expectError(await ctx.call(`${base}?data_type=string&data_id=s`), 400, "invalid_request");
    expectError(await ctx.call(`${base}?data_id=s`), 400);
    expectError(await ctx.call(`${base}?data_type=float64&data_id=s&buckets=0`), 400);
    expectError(await ctx.call(`${base}?data_type=float64&data_id=s&buckets=10001`), 400);
    expectError(await ctx.call(`${base}?data_type=float64&data_id=s&start=yesterday`), 400);
    expectError(
      await ctx.call(`${base}?data_type=float64&data_id=s&start=2026-01-02T00:00:00Z&end=2026-01-01T00:00:00Z`),
      400,
      "invalid_request",
    );
    expectError(await ctx.call(`${P}/measurements/${uuid()}/series?data_type=float64&data_id=s`), 404, "not_found");
    expectError(await ctx.call(`${P}/measurements/not-a-uuid/series?data_type=float64&data_id=s`), 400);
  });

  it("is guarded like the data endpoint: members read, others are refused", async () => {
    const admin = ctx.call;
    const group = (await json(admin("/auth/groups", { method: "POST", json: { name: "SG" } }), 201)).uuid;
    const project = (await json(admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "SP" } }), 201))
      .uuid;
    const PP = `/v1/projects/${project}`;
    const m = await createMeasurement(admin, {}, `${PP}/measurements`);
    await uploadProto(
      admin,
      chunksMessage(m.uuid, uuid(), [[{ name: "x", type: "float64", elapsed: 0n, payload: f64(1.5) }]]),
      `${PP}/measurements/sequences/chunks`,
    );
    const member = await makeUser(ctx.peer, admin, "series-member");
    await json(
      admin(`/auth/projects/${project}/members`, {
        method: "POST",
        json: { user_uuid: member.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    const outsider = await makeUser(ctx.peer, admin, "series-outsider");
    const url = `${PP}/measurements/${m.uuid}/series?data_type=float64&data_id=x`;
    const ok = await member.call(url);
    expect(ok.status).toBe(200);
    expect(ok.body.buckets.max).toEqual([1.5]);
    expectError(await outsider.call(url), 403, "forbidden");
  });
});
