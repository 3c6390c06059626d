// The reduced series of numeric fields inside JSON payloads, chosen with a JSON pointer (`field=/a/b`):
// json data IDs, and string data IDs holding JSON objects; a malformed pointer is refused with {type, title}.
import { describe, expect, it } from "vitest";
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

const MS = 1_000_000n;
const text = (name: string, type: string, i: number, value: unknown): TestPoint => ({
  name,
  type,
  elapsed: BigInt(i) * MS,
  payload: Buffer.from(JSON.stringify(value)),
});

describe("reduced series of JSON fields", () => {
  const ctx = withPeer();
  let m: string;
  const series = (q: string) => ctx.call(`${P}/measurements/${m}/series?${q}`);

  it("reads the field a JSON pointer names: nested keys, array items, escaped tokens", async () => {
    const pts: TestPoint[] = [];
    for (let i = 0; i < 10; i++) {
      pts.push(
        text("imu", "json", i, { acc: { x: i, y: -i }, list: [i * 10, "n"], "a/b": { "m~n": i / 2 }, label: "still" }),
      );
      pts.push(text("gps", "string", i, { lat: 35 + i / 100, fix: i % 2 === 0 }));
    }
    pts.push(text("gps", "string", 10, "not an object"));
    m = (await createMeasurement(ctx.call)).uuid;
    expect((await uploadProto(ctx.call, chunksMessage(m, uuid(), [pts]))).status).toBe(200);

    const x = await series("data_type=json&data_id=imu&field=/acc/x&buckets=1");
    expect(x.status, JSON.stringify(x.body)).toBe(200);
    expect(x.body).toMatchObject({
      point_count: 10,
      skipped_count: 0,
      buckets: { min: [0], max: [9], time_max: [0.009], count: [10] },
    });
    expect((await series("data_type=json&data_id=imu&field=/acc/y&buckets=1")).body.buckets).toMatchObject({
      min: [-9],
      max: [0],
    });
    expect((await series("data_type=json&data_id=imu&field=/list/0&buckets=1")).body.buckets).toMatchObject({
      min: [0],
      max: [90],
    });
    expect((await series("data_type=json&data_id=imu&field=/a~1b/m~0n&buckets=1")).body.buckets).toMatchObject({
      min: [0],
      max: [4.5],
    });
    // A field that is not a number (a string, an object, an array item that is text, a missing key) is skipped.
    for (const f of ["/label", "/acc", "/list/1", "/nope", "/acc/x/deeper"]) {
      expect((await series(`data_type=json&data_id=imu&field=${encodeURIComponent(f)}`)).body).toMatchObject({
        point_count: 0,
        skipped_count: 10,
      });
    }
    // A string data ID holding JSON: plotted by field; its non-JSON payload is skipped.
    const lat = await series("data_type=string&data_id=gps&field=/lat&buckets=1");
    expect(lat.status, JSON.stringify(lat.body)).toBe(200);
    expect(lat.body).toMatchObject({ point_count: 10, skipped_count: 1, buckets: { min: [35], max: [35.09] } });
    expect((await series("data_type=string&data_id=gps&field=/fix")).body).toMatchObject({
      point_count: 0,
      skipped_count: 11,
    });
  });

  it("refuses a malformed pointer, and a string data ID without a field, with {type, title}", async () => {
    for (const f of ["acc.x", "acc/x", "/a~2", "/a~", `/${"x".repeat(300)}`]) {
      const r = await series(`data_type=json&data_id=imu&field=${encodeURIComponent(f)}`);
      expectError(r, 400);
      expect(r.body.properties?.field, JSON.stringify(r.body)).toBeDefined();
    }
    expectError(await series("data_type=string&data_id=gps"), 400, "invalid_request");
  });

  it("documents the field in the OpenAPI document", async () => {
    const doc = (await ctx.call("/openapi.json")).body;
    const op = Object.values(doc.paths as Record<string, any>)
      .flatMap((p) => Object.values(p))
      .find((o: any) => o.operationId === "getProjectMeasurementReducedSeries") as any;
    const field = op.parameters.find((p: any) => p.name === "field");
    expect(field.in).toBe("query");
    expect(JSON.stringify(field)).toContain("JSON pointer");
  });
});
