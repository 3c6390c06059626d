// Every measurement operation, fed malformed input, answers 4xx in the {type, title} shape, never 5xx.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, createMeasurement, caller, uuid } from "./helpers.js";

const BODIES: Array<{ type: string; body: string | Buffer }> = [
  { type: "application/json", body: "{" },
  { type: "application/json", body: "[]" },
  { type: "application/json", body: '"text"' },
  {
    type: "application/json",
    body: '{"basetime": 5, "priority": "high", "name": [], "expected_data_points": -4, "final_sequence_number": 1.5, "meas_uuid": {}, "chunks": "x"}',
  },
  {
    type: "application/json",
    body: '{"meas_uuid": "00000000-0000-0000-0000-000000000000", "sequence_uuid": "00000000-0000-0000-0000-000000000001", "chunks": [{"sequence_number": 1, "data_point_groups": [{"data_id": null}]}]}',
  },
  { type: "application/vnd.iscp.v2.protobuf", body: Buffer.from([0x0a, 0xff, 0xff]) },
  { type: "text/plain", body: "hello" },
];

describe("measurements: malformed input over every operation", () => {
  let peer: TestPeer;
  let token: string;
  let meas: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    token = await adminToken(peer);
    meas = (await createMeasurement(caller(peer, token))).uuid;
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("never answers 5xx", async () => {
    const doc: any = await (await peer.api("/openapi.json")).json();
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith("/v1/") && !p.endsWith("/events"));
    expect(paths.length).toBeGreaterThan(20);
    let calls = 0;
    for (const path of paths) {
      for (const method of Object.keys(doc.paths[path])) {
        const variants = [
          path
            .replace("{project_uuid}", "00000000-0000-0000-0000-000000000000")
            .replace("{measurement_uuid}", meas)
            .replace("{sequences_uuid}", uuid())
            .replace("{type}", "ntp"),
          path
            .replace("{project_uuid}", "nope")
            .replace("{measurement_uuid}", "nope")
            .replace("{sequences_uuid}", "x")
            .replace("{type}", "x%00y"),
          path
            .replace("{project_uuid}", uuid())
            .replace("{measurement_uuid}", uuid())
            .replace("{sequences_uuid}", uuid())
            .replace("{type}", "99999999999999999999"),
        ];
        for (const url of variants) {
          const queries = [
            "",
            "?name=&limit=abc&order=up&start=x&idq[]=&time_format=ps&page=0&status[]=zzz",
            "?name=" + "a".repeat(300),
          ];
          for (const q of queries) {
            for (const b of method === "get" || method === "delete" ? [undefined] : BODIES) {
              const res = await peer.api(url + q, {
                method: method.toUpperCase(),
                headers: { "X-Intdash-Token": token, ...(b ? { "content-type": b.type } : {}) },
                body: b?.body as unknown as BodyInit | undefined,
              });
              calls++;
              const text = await res.text();
              expect(res.status, `${method} ${url}${q} -> ${res.status} ${text}`).toBeLessThan(500);
              if (res.status >= 400) {
                const e = JSON.parse(text);
                expect(typeof e.type).toBe("string");
                expect(typeof e.title).toBe("string");
              }
            }
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(200);
    // Hundreds of requests: on a loaded machine this sweep takes well over the default 30 s.
  }, 120_000);
});
