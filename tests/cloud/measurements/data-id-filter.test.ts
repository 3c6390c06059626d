// The data endpoint's data_id_filter (the form the intdash SDK's lessons send, e.g. `#:1/gnss_coordinates`)
// and data_name on every NDJSON line, over a real peer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestPeer } from "../harness.js";
import {
  P,
  chunksMessage,
  createMeasurement,
  expectError,
  ndjson,
  startPeerWithAdmin,
  unframe,
  uploadProto,
  uuid,
  type Call,
  type TestPoint,
} from "./helpers.js";

const IDS: Array<[string, string]> = [
  ["float64", "1/gnss_coordinates"],
  ["float64", "1/gnss_speed"],
  ["string", "0/GNRMC"],
  ["bytes", "1/deep/h264"],
  ["float64", "2/gnss_coordinates"],
];

describe("measurements: data_id_filter and data_name", () => {
  let peer: TestPeer;
  let call: Call;
  let token: string;
  let meas: string;
  beforeAll(async () => {
    ({ peer, token, admin: call } = await startPeerWithAdmin());
    meas = (await createMeasurement(call)).uuid;
    // Three points per data ID, interleaved in time.
    const points: TestPoint[] = [];
    for (let i = 0; i < 3; i++)
      for (const [k, [type, name]] of IDS.entries())
        points.push({ type, name, elapsed: BigInt(i * 10 + k) * 1_000_000n, payload: new Uint8Array([k, i]) });
    const r = await uploadProto(call, chunksMessage(meas, uuid(), [points]));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });
  afterAll(() => peer?.stop());

  const data = (query: string, accept?: string) =>
    peer.api(`${P}/data?name=${meas}&${query}`, {
      headers: { "X-Intdash-Token": token, ...(accept ? { accept } : {}) },
    });
  const f = (...entries: string[]) => entries.map((e) => `data_id_filter=${encodeURIComponent(e)}`).join("&");
  /** The [type, name] pairs of the lines answered, once each, in order of first appearance. */
  async function ids(query: string): Promise<string[]> {
    const res = await data(query);
    expect(res.status).toBe(200);
    const lines = ndjson(await res.text());
    return [...new Set(lines.map((l) => `${l.data_type}:${l.data_name}`))];
  }

  it("answers only the data IDs the SDK's filter names, each line carrying data_name", async () => {
    const res = await data(f("#:1/gnss_coordinates"));
    const lines = ndjson(await res.text());
    expect(lines).toHaveLength(3);
    for (const l of lines) {
      expect(l).toMatchObject({
        measurement_uuid: meas,
        data_type: "float64",
        data_id: "1/gnss_coordinates",
        data_name: "1/gnss_coordinates",
      });
      expect(Buffer.from(l.data.d, "base64")[0]).toBe(0);
    }
    // Several entries (repeated key, as generated clients send a list) add up.
    expect(await ids(f("#:0/GNRMC", "#:1/gnss_coordinates"))).toEqual(["float64:1/gnss_coordinates", "string:0/GNRMC"]);
    // The bracketed key works the same.
    expect(await ids(`data_id_filter[]=${encodeURIComponent("string:#")}`)).toEqual(["string:0/GNRMC"]);
  });

  it("reads # as the rest of the levels, + as one level, * within a level, and a bare type as any name", async () => {
    expect(await ids(f("#:1/#"))).toEqual(["float64:1/gnss_coordinates", "float64:1/gnss_speed", "bytes:1/deep/h264"]);
    expect(await ids(f("#:1/+"))).toEqual(["float64:1/gnss_coordinates", "float64:1/gnss_speed"]);
    expect(await ids(f("#:+/gnss_coordinates"))).toEqual(["float64:1/gnss_coordinates", "float64:2/gnss_coordinates"]);
    expect(await ids(f("float64:1/gnss_*"))).toEqual(["float64:1/gnss_coordinates", "float64:1/gnss_speed"]);
    expect(await ids(f("#:*/deep/*"))).toEqual(["bytes:1/deep/h264"]);
    expect(await ids(f("bytes"))).toEqual(["bytes:1/deep/h264"]);
    expect(await ids(f("#:#"))).toHaveLength(IDS.length);
    expect(await ids(f("#:1/nothing"))).toEqual([]);
  });

  it("narrows with idq[] when both are given", async () => {
    expect(await ids(`${f("#:1/#")}&idq[]=${encodeURIComponent("float64:*")}`)).toEqual([
      "float64:1/gnss_coordinates",
      "float64:1/gnss_speed",
    ]);
  });

  it("applies the filter to the protobuf form too", async () => {
    const res = await data(f("#:0/GNRMC"), "application/protobuf");
    const msgs = unframe(Buffer.from(await res.arrayBuffer()));
    expect(msgs.map((m) => [m.dataType, m.dataName])).toEqual([
      ["string", "0/GNRMC"],
      ["string", "0/GNRMC"],
      ["string", "0/GNRMC"],
    ]);
  });

  it("refuses a filter it cannot read with a 400 naming data_id_filter", async () => {
    for (const bad of ["#/x:1/a", "float64:1/#/a", "float64:1/a+", ":1/a", "float64:"]) {
      const res = await data(f(bad));
      const body: any = await res.json();
      expectError({ status: res.status, body, headers: res.headers }, 400, "invalid_request");
      expect(Object.keys(body.properties ?? {}).join(" "), bad).toContain("data_id_filter");
    }
  });
});
