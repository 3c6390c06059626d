// Measurement markers (point and range) under intdash's operationIds, over a real peer: create, list,
// get, update, delete, the measurement's `markers`, the project-wide list and its filters, access.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { json, makeUser, READ_ONLY } from "../org/helpers.js";
import { adminCall, createMeasurement, expectError, P, uuid, type Call } from "./helpers.js";

const point = (t: number, extra: Record<string, unknown> = {}) => ({
  type: "point",
  name: `p${t}`,
  detail: { occurred_elapsed_time: t },
  ...extra,
});

describe("measurements: markers", () => {
  let peer: TestPeer;
  let admin: Call;
  let adminUuid: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminCall(peer);
    adminUuid = (await peer.svc.accounts.findUserByName("admin"))!.uuid;
  });
  afterAll(() => peer?.stop());

  it("creates point and range markers, lists them by time, reads, updates and deletes them", async () => {
    const m = (await createMeasurement(admin)).uuid;
    const base = `${P}/measurements/${m}/markers`;
    const range = await admin(base, {
      method: "POST",
      json: {
        type: "range",
        name: "lap",
        description: "first lap",
        detail: { start_elapsed_time: 100, end_elapsed_time: 200 },
        tag: { lap: "1" },
      },
    });
    expect(range.status, JSON.stringify(range.body)).toBe(201);
    expect(range.body).toMatchObject({
      type: "range",
      name: "lap",
      description: "first lap",
      detail: { start_elapsed_time: 100, end_elapsed_time: 200 },
      tag: { lap: "1" },
      created_by: adminUuid,
      updated_by: adminUuid,
    });
    expect(range.body.uuid).toMatch(/^[0-9a-f-]{36}$/);
    // A marker exported from another server, sent back whole: its read-only fields are ignored.
    const pt = await admin(base, {
      method: "POST",
      json: {
        ...point(50),
        tag: { Status: "Exceeds threshold" },
        uuid: uuid(),
        created_at: "2020-01-01T00:00:00Z",
        created_by: "x",
        updated_at: "x",
        updated_by: "x",
      },
    });
    expect(pt.status, JSON.stringify(pt.body)).toBe(201);
    expect(pt.body).toMatchObject({
      type: "point",
      detail: { occurred_elapsed_time: 50 },
      description: "",
      created_by: adminUuid,
    });
    expect(pt.body.detail).toEqual({ occurred_elapsed_time: 50 });

    expect((await admin(base)).body).toEqual({ items: [pt.body, range.body] });
    expect((await admin(`${base}/${pt.body.uuid}`)).body).toEqual(pt.body);
    expect((await admin(`${P}/measurements/markers/${range.body.uuid}`)).body).toEqual(range.body);
    // The measurement carries its markers (the SDK's export reads them there), in the list too.
    expect((await admin(`${P}/measurements/${m}`)).body.markers).toEqual([pt.body, range.body]);
    const listed = (await admin(`${P}/measurements?uuid[]=${m}`)).body.items;
    expect(listed[0].markers).toEqual([pt.body, range.body]);

    // PUT replaces the fields given; the rest stays.
    const renamed = await admin(`${base}/${range.body.uuid}`, { method: "PUT", json: { name: "lap 1" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      name: "lap 1",
      description: "first lap",
      detail: { start_elapsed_time: 100, end_elapsed_time: 200 },
      tag: { lap: "1" },
    });
    const moved = await admin(`${P}/measurements/markers/${range.body.uuid}`, {
      method: "PUT",
      json: { type: "point", detail: { occurred_elapsed_time: 7 }, tag: {} },
    });
    expect(moved.body).toMatchObject({ type: "point", detail: { occurred_elapsed_time: 7 }, tag: {}, name: "lap 1" });
    expect(moved.body.detail).toEqual({ occurred_elapsed_time: 7 });

    expect((await admin(`${base}/${pt.body.uuid}`, { method: "DELETE" })).status).toBe(204);
    expectError(await admin(`${base}/${pt.body.uuid}`), 404, "not_found");
    expectError(await admin(`${P}/measurements/markers/${pt.body.uuid}`, { method: "DELETE" }), 404, "not_found");
    await admin(base, { method: "POST", json: point(1) });
    expect((await admin(base)).body.items).toHaveLength(2);
    expect((await admin(base, { method: "DELETE" })).status).toBe(204);
    expect((await admin(base)).body).toEqual({ items: [] });
    // The legacy paths are the default project's.
    const legacy = await admin(`/v1/measurements/${m}/markers`, { method: "POST", json: point(3) });
    expect(legacy.status).toBe(201);
    expect((await admin(`/v1/measurements/markers/${legacy.body.uuid}`)).body).toEqual(legacy.body);
  });

  it("refuses bodies it cannot use with a 400 naming the field", async () => {
    const m = (await createMeasurement(admin)).uuid;
    const base = `${P}/measurements/${m}/markers`;
    const bad: Array<[unknown, string]> = [
      [{ name: "no type", detail: { occurred_elapsed_time: 1 } }, "type"],
      [{ type: "point" }, "detail"],
      [{ type: "point", detail: {} }, "detail.occurred_elapsed_time"],
      [{ type: "range", detail: { start_elapsed_time: 5 } }, "detail"],
      [{ type: "range", detail: { start_elapsed_time: 5, end_elapsed_time: 4 } }, "detail.end_elapsed_time"],
      [{ type: "span", detail: {} }, "type"],
      [{ ...point(1), tag: { a: { nested: "no" } } }, "tag"],
      [{ ...point(1), colour: "red" }, "colour"],
      [{ ...point(1.5) }, "detail"],
    ];
    for (const [body, field] of bad) {
      const r = await admin(base, { method: "POST", json: body });
      expectError(r, 400, "invalid_request");
      expect(Object.keys(r.body.properties ?? {}).join(" "), JSON.stringify(body)).toContain(field);
    }
    expectError(
      await admin(`${P}/measurements/${uuid()}/markers`, { method: "POST", json: point(1) }),
      404,
      "not_found",
    );
    expectError(await admin(`${P}/measurements/markers/${uuid()}`), 404, "not_found");
    expect((await admin(base)).body.items).toEqual([]);
  });

  it("lists a project's markers with intdash's filters, sort and paging", async () => {
    const m1 = (await createMeasurement(admin, { basetime: "2026-03-01T00:00:00Z" })).uuid;
    const m2 = (await createMeasurement(admin, { basetime: "2026-03-02T00:00:00Z" })).uuid;
    const mk = async (m: string, body: Record<string, unknown>) =>
      (await admin(`${P}/measurements/${m}/markers`, { method: "POST", json: body })).body;
    // The tag table of intdash's own example: 1 = {a: value1, c: value2, e: 1}, 2 = {a: b, c: d}, 3 = {a: b}.
    const k1 = await mk(m1, point(2_000_000, { name: "one", tag: { a: "value1", c: "value2", e: "1" } }));
    const k2 = await mk(m1, point(1_000_000, { name: "two", tag: { a: "b", c: "d" } }));
    const k3 = await mk(m2, {
      type: "range",
      name: "three",
      detail: { start_elapsed_time: 0, end_elapsed_time: 5 },
      tag: { a: "b" },
    });
    const ours = [k1.uuid, k2.uuid, k3.uuid];
    const names = async (query: string) => {
      const r = await admin(`${P}/measurements/markers?${query}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.items.filter((k: { uuid: string }) => ours.includes(k.uuid)).map((k: { name: string }) => k.name);
    };
    expect(await names("")).toEqual(["two", "one", "three"]);
    expect(await names("order=desc")).toEqual(["three", "one", "two"]);
    expect(await names("sort=name")).toEqual(["one", "three", "two"]);
    expect(await names("tag.e=")).toEqual(["one"]);
    expect(await names("!tag.c=")).toEqual(["three"]);
    expect(await names("tag.a=&!tag.e=")).toEqual(["two", "three"]);
    expect(await names("tag.a=val&tag.c=d")).toEqual(["two", "one"]);
    expect(await names("name=one&name=three")).toEqual(["one", "three"]);
    expect(await names(`uuid=${k2.uuid}`)).toEqual(["two"]);
    const day2 = Date.parse("2026-03-02T00:00:00Z") * 1000;
    expect(await names(`start_unix_micro=${day2}`)).toEqual(["three"]);
    expect(await names(`end_unix_micro=${day2}&start_unix_micro=${day2 - 86_400_000_000 + 1_500_000}`)).toEqual([
      "one",
    ]);
    const paged = await admin(`${P}/measurements/markers?${ours.map((u) => `uuid=${u}`).join("&")}&limit=2&page=2`);
    expect(paged.body.items.map((k: { name: string }) => k.name)).toEqual(["three"]);
    expect(paged.body.page).toMatchObject({ total_count: 3, first: false, last: true, next: "" });
    expect(paged.body.page.previous).toContain("page=1");
  });

  it("guards markers like the measurement they belong to", async () => {
    const group = (await json(admin("/auth/groups", { method: "POST", json: { name: "MG" } }), 201)).uuid;
    const project = (await json(admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "MP" } }), 201))
      .uuid;
    const PP = `/v1/projects/${project}`;
    const m = (await createMeasurement(admin, {}, `${PP}/measurements`)).uuid;
    const k = (await admin(`${PP}/measurements/${m}/markers`, { method: "POST", json: point(10) })).body;
    const reader = await makeUser(peer, admin, "marker-reader");
    await json(
      admin(`/auth/projects/${project}/members`, {
        method: "POST",
        json: { user_uuid: reader.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    const outsider = (await makeUser(peer, admin, "marker-outsider")).call;

    expect((await reader.call(`${PP}/measurements/${m}/markers/${k.uuid}`)).status).toBe(200);
    expectError(
      await reader.call(`${PP}/measurements/${m}/markers`, { method: "POST", json: point(1) }),
      403,
      "forbidden",
    );
    expectError(await reader.call(`${PP}/measurements/markers/${k.uuid}`, { method: "DELETE" }), 403, "forbidden");
    expectError(await outsider(`${PP}/measurements/${m}/markers`), 403, "forbidden");
    expectError(await outsider(`${PP}/measurements/markers/${k.uuid}`), 403, "forbidden");
    // Not visible through another project, nor the default one.
    expectError(await admin(`/v1/measurements/markers/${k.uuid}`), 404, "not_found");
    expectError(
      await admin(`${P}/measurements/markers/${k.uuid}`, { method: "PUT", json: { name: "x" } }),
      404,
      "not_found",
    );
    expect((await admin(`${P}/measurements/markers?uuid=${k.uuid}`)).body.items).toEqual([]);
    // Deleting the measurement deletes its markers.
    expect((await admin(`${PP}/measurements/${m}`, { method: "DELETE" })).status).toBe(204);
    expectError(await admin(`${PP}/measurements/markers/${k.uuid}`), 404, "not_found");
  });
});
