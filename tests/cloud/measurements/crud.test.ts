import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestPeer } from "../harness.js";
import { BASETIME, EDGE, P, createMeasurement, expectError, startPeerWithAdmin, uuid, type Call } from "./helpers.js";

describe("measurements: create, list, get, update, delete, end, complete", () => {
  let peer: TestPeer;
  let call: Call;
  beforeAll(async () => ({ peer, admin: call } = await startPeerWithAdmin()));
  afterAll(() => peer?.stop());

  it("creates a measurement and reads it back in the Measurement shape", async () => {
    const m = await createMeasurement(call, { name: "run 1", description: "first", basetime_priority: 25 });
    expect(m.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(m).toMatchObject({
      name: "run 1",
      description: "first",
      basetime: BASETIME,
      basetime_type: "edge_rtc",
      edge_uuid: EDGE,
      protected: false,
      ended: false,
      completed: false,
      status: "measuring",
      received_data_points: 0,
      duration: 0,
      max_elapsed_time: 0,
      markers: [],
      sequences: { status: "ready", received_data_points: 0, received_chunks_ratio: 0 },
    });
    expect(typeof m.max_priority_basetime_id).toBe("number");
    const got = await call(`${P}/measurements/${m.uuid}`);
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(got.body).toEqual(m);
  });

  it("creates with a given UUID, refuses the same UUID twice (409)", async () => {
    const id = uuid();
    const m = await createMeasurement(call, {}, `${P}/measurements/${id}`);
    expect(m.uuid).toBe(id);
    const again = await call(`${P}/measurements/${id}`, {
      method: "POST",
      json: { basetime: BASETIME, basetime_type: "ntp", edge_uuid: EDGE, protected: false },
    });
    expectError(again, 409, "conflict");
  });

  it("serves the legacy /v1/measurements paths as the default project", async () => {
    const m = await createMeasurement(call, { name: "legacy" }, "/v1/measurements");
    const viaProject = await call(`${P}/measurements/${m.uuid}`);
    expect(viaProject.status).toBe(200);
    const viaLegacy = await call(`/v1/measurements/${m.uuid}`);
    expect(viaLegacy.body).toEqual(viaProject.body);
  });

  it("lists with filters, sort, order and paging (PageDetail)", async () => {
    const edge = uuid();
    const names = ["alpha", "beta", "gamma", "alphabet"];
    for (const [i, name] of names.entries())
      await createMeasurement(call, { name, edge_uuid: edge, basetime: `2026-03-0${i + 1}T00:00:00Z` });
    const all = await call(`${P}/measurements?edge_uuid=${edge}`);
    expect(all.status).toBe(200);
    expect(all.body.items.map((m: any) => m.name)).toEqual(names);
    expect(all.body.page).toEqual({ total_count: 4, first: true, last: true, next: "", previous: "" });

    const prefix = await call(`${P}/measurements?edge_uuid=${edge}&name=alpha`);
    expect(prefix.body.items.map((m: any) => m.name)).toEqual(["alpha", "alphabet"]);
    const exact = await call(`${P}/measurements?edge_uuid=${edge}&name=${encodeURIComponent('"alpha"')}`);
    expect(exact.body.items.map((m: any) => m.name)).toEqual(["alpha"]);

    const desc = await call(`${P}/measurements?edge_uuid=${edge}&sort=name&order=desc`);
    expect(desc.body.items.map((m: any) => m.name)).toEqual(["gamma", "beta", "alphabet", "alpha"]);

    const page2 = await call(`${P}/measurements?edge_uuid=${edge}&limit=3&page=2`);
    expect(page2.body.items.map((m: any) => m.name)).toEqual(["alphabet"]);
    expect(page2.body.page).toMatchObject({ total_count: 4, first: false, last: true, next: "" });
    expect(page2.body.page.previous).toContain("page=1");
    const page1 = await call(`${P}/measurements?edge_uuid=${edge}&limit=3`);
    expect(page1.body.page.next).toContain("page=2");

    const range = await call(`${P}/measurements?edge_uuid=${edge}&start=2026-03-02T00:00:00Z&end=2026-03-04T00:00:00Z`);
    expect(range.body.items.map((m: any) => m.name)).toEqual(["beta", "gamma"]);

    const byUuid = await call(`${P}/measurements?uuid[]=${all.body.items[1].uuid}&uuid[]=${all.body.items[2].uuid}`);
    expect(byUuid.body.items.map((m: any) => m.name)).toEqual(["beta", "gamma"]);
  });

  it("filters by partial_match, duration, basetime_type, ended and since", async () => {
    const edge = uuid();
    const a = await createMeasurement(call, { name: "a", edge_uuid: edge, basetime: "2026-04-01T00:00:00Z" });
    const b = await createMeasurement(call, {
      name: "b",
      edge_uuid: edge,
      basetime: "2026-04-02T00:00:00Z",
      basetime_type: "ntp",
    });
    // a lasts 2 days (a point 48 h after its base time), b has no data.
    const seq = uuid();
    await call(`${P}/measurements/sequences/chunks`, {
      method: "POST",
      json: {
        measUuid: a.uuid,
        sequenceUuid: seq,
        chunks: [
          {
            sequenceNumber: 1,
            dataPointGroups: [
              {
                dataId: { name: "x", type: "bytes" },
                dataPoints: [{ elapsedTime: String(48n * 3600n * 1_000_000_000n), payload: "AA==" }],
              },
            ],
          },
        ],
      },
    });
    const names = async (q: string) =>
      (await call(`${P}/measurements?edge_uuid=${edge}&${q}`)).body.items.map((m: any) => m.name);
    const win = "start=2026-04-02T12:00:00Z&end=2026-04-05T00:00:00Z";
    expect(await names(win)).toEqual([]);
    expect(await names(`${win}&partial_match=true`)).toEqual(["a"]);
    expect(await names(`duration_start=${3600 * 1_000_000}`)).toEqual(["a"]);
    expect(await names(`duration_end=1000`)).toEqual(["b"]);
    expect(await names("basetime_type=ntp")).toEqual(["b"]);
    await call(`${P}/measurements/${b.uuid}/end`, { method: "PUT" });
    expect(await names("ended=true")).toEqual(["b"]);
    expect(await names("ended=false")).toEqual(["a"]);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(await names(`since=${later}`)).toEqual([]);
    expect(await names(`since=2020-01-01T00:00:00Z`)).toEqual(["a", "b"]);
  });

  it("updates with PUT (204), protects, refuses to delete a protected one, deletes", async () => {
    const m = await createMeasurement(call);
    const put = await call(`${P}/measurements/${m.uuid}`, {
      method: "PUT",
      json: { name: "renamed", description: "d2" },
    });
    expect(put.status).toBe(204);
    expect(put.body).toBeUndefined();
    const got = await call(`${P}/measurements/${m.uuid}`);
    expect(got.body).toMatchObject({ name: "renamed", description: "d2" });

    expect((await call(`${P}/measurements/${m.uuid}/protected`, { method: "PUT" })).status).toBe(204);
    expectError(await call(`${P}/measurements/${m.uuid}`, { method: "DELETE" }), 403, "forbidden");
    expect((await call(`${P}/measurements/${m.uuid}/protected`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`${P}/measurements/${m.uuid}`, { method: "DELETE" })).status).toBe(204);
    expectError(await call(`${P}/measurements/${m.uuid}`), 404, "not_found");
  });

  it("end answers the sequence status; complete answers the measurement", async () => {
    const m = await createMeasurement(call);
    const end = await call(`${P}/measurements/${m.uuid}/end`, { method: "PUT" });
    expect(end.status).toBe(200);
    // No sequence expects anything: the ended measurement is complete.
    expect(end.body).toEqual({ status: "completed" });
    const m2 = await createMeasurement(call);
    const done = await call(`${P}/measurements/${m2.uuid}/complete`, { method: "PUT" });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      uuid: m2.uuid,
      completed: true,
      ended: true,
      status: "finished",
      sequences: { status: "completed" },
    });
  });

  it("answers bad input with 400 {type, title} and never 500", async () => {
    const bad = [
      await call(`${P}/measurements`, { method: "POST", json: { basetime_type: "edge_rtc", edge_uuid: EDGE } }),
      await call(`${P}/measurements`, {
        method: "POST",
        json: { basetime: "yesterday", basetime_type: "edge_rtc", edge_uuid: EDGE },
      }),
      await call(`${P}/measurements`, {
        method: "POST",
        json: { basetime: BASETIME, basetime_type: "sundial", edge_uuid: EDGE },
      }),
      await call(`${P}/measurements`, {
        method: "POST",
        json: { basetime: BASETIME, basetime_type: "ntp", edge_uuid: "nope" },
      }),
      await call(`${P}/measurements`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{not json",
      }),
      await call(`${P}/measurements/not-a-uuid`),
      await call(`/v1/projects/xyz/measurements`),
      await call(`${P}/measurements?limit=-1`),
      await call(`${P}/measurements?sort=colour`),
      await call(`${P}/measurements?status[]=sleeping`),
      await call(`${P}/measurements?start=tomorrow`),
    ];
    for (const r of bad) {
      expectError(r, 400, "invalid_request");
    }
    expect(bad[0]!.body.properties).toHaveProperty("basetime");
  });

  it("keeps projects apart: through an unknown project a measurement is 404", async () => {
    const m = await createMeasurement(call);
    expectError(await call(`/v1/projects/${uuid()}/measurements/${m.uuid}`), 404, "not_found");
  });

  it("needs credentials", async () => {
    const res = await peer.api(`${P}/measurements`);
    expect(res.status).toBe(401);
  });
});
