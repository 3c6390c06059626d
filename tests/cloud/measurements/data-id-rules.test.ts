// A REST chunk upload whose data IDs break the data-ID rules (the ones the broker and the agent apply)
// is refused whole with a 400 naming each offending group; before, such IDs were stored and then
// could not be streamed to the agent or through the broker.
import { describe, expect, it } from "vitest";
import {
  chunksMessage,
  createMeasurement,
  jsonBody,
  P,
  uploadProto,
  uuid,
  withPeer,
  type TestPoint,
} from "./helpers.js";

const ctx = withPeer();
const point = (name: string, type: string, elapsed = 1n): TestPoint => ({
  name,
  type,
  elapsed,
  payload: new Uint8Array([1, 2, 3]),
});
const BAD_NAME = "/../#+\0\uD800";

async function nothingStored(measUuid: string): Promise<void> {
  const { call } = ctx;
  expect((await call(`${P}/measurements/${measUuid}/sequences`)).body).toMatchObject({ items: [] });
  expect((await call(`${P}/data_ids?name=${measUuid}`)).body).toEqual({ items: [] });
  expect((await call(`${P}/measurements/${measUuid}`)).body).toMatchObject({ received_data_points: 0 });
}

describe("REST chunk upload: data-ID rules", () => {
  it("an empty type and a name with `/..`, wildcards, NUL and a lone surrogate: 400 naming each group, nothing stored", async () => {
    const { call } = ctx;
    const m = await createMeasurement(call);
    const msg = chunksMessage(m.uuid, uuid(), [
      [
        point("1/good", "float64"),
        point("1/empty-type", ""),
        point(BAD_NAME, "float64"),
        point("a/\uDC00b", "float64"),
      ],
    ]);
    const r = await call(`${P}/measurements/sequences/chunks`, { method: "POST", json: jsonBody(msg) });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.type).toBe("invalid_request");
    expect(r.body.title).toBe(
      'invalid body: chunks.0.data_point_groups.1.data_id: data type must not be empty (name "1/empty-type", type "")',
    );
    expect(r.body.properties).toEqual({
      "chunks.0.data_point_groups.1.data_id": 'data type must not be empty (name "1/empty-type", type "")',
      "chunks.0.data_point_groups.2.data_id":
        'data name must not start or end with `/` (name "/../#+\\u0000\\ud800", type "float64")',
      "chunks.0.data_point_groups.3.data_id":
        'data name must be well-formed Unicode (no lone UTF-16 surrogate) (name "a/\\udc00b", type "float64")',
    });
    await nothingStored(m.uuid);
  });

  it("each data-name and data-type rule refuses a protobuf upload too", async () => {
    const { call } = ctx;
    const m = await createMeasurement(call);
    const cases: Array<[string, string, string]> = [
      ["a//b", "float64", "data name must not contain `//`"],
      ["a/#", "float64", "data name must not contain `#` or `+`"],
      ["a/+/b", "float64", "data name must not contain `#` or `+`"],
      ["a\u0000b", "float64", "data name must not contain control characters"],
      ["a\u007f", "float64", "data name must not contain control characters"],
      ["a", "two words", "data type must be printable ASCII without spaces"],
      ["a", "é", "data type must be printable ASCII without spaces"],
      ["a", "t".repeat(256), "data type must be at most 255 characters"],
      ["", "float64", "data name must not be empty"],
    ];
    for (const [name, type, why] of cases) {
      const r = await uploadProto(call, chunksMessage(m.uuid, uuid(), [[point(name, type)]]));
      expect(r.status, `${JSON.stringify(name)} ${JSON.stringify(type)}`).toBe(400);
      expect(r.body.properties["chunks.0.data_point_groups.0.data_id"]).toContain(why);
    }
    await nothingStored(m.uuid);
  });

  it("a good upload (names with levels, types with `/`) is stored", async () => {
    const { call } = ctx;
    const m = await createMeasurement(call);
    const msg = chunksMessage(m.uuid, uuid(), [
      [point("v1/10/can", "can_frame"), point("日本/名前", "h264_frame/idr_frame", 2n)],
    ]);
    const r = await uploadProto(call, msg);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.items).toEqual([{ sequence_number: 1, result: "ok" }]);
    const ids = (await call(`${P}/data_ids?name=${m.uuid}`)).body.items as Array<{
      data_id: string;
      data_type: string;
    }>;
    expect(ids.map((d) => `${d.data_type}:${d.data_id}`).sort()).toEqual([
      "can_frame:v1/10/can",
      "h264_frame/idr_frame:日本/名前",
    ]);
  });
});
