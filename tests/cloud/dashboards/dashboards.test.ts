// A project's dashboards and its edges' series labels over the REST API: saved and read back, one default
// dashboard per edge, bad input refused in the API's shape, and members of other projects kept out.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { json, makeUser, MEMBER, READ_ONLY, type TestUser } from "../org/helpers.js";
import { adminCall, expectError, uuid, type Call } from "../measurements/helpers.js";

const plot = (ids: string[], width = 12) => ({
  kind: "plot",
  title: "Speeds",
  series: ids.map((data_id) => ({ data_type: "float64", data_id })),
  width,
  height: 320,
});

describe("dashboards", () => {
  let peer: TestPeer;
  let admin: Call;
  let project: string;
  let other: string;
  let D: string;
  let member: TestUser;
  let reader: TestUser;
  let outsider: TestUser;
  const edge = uuid();

  const newProject = async (name: string) => {
    const group = (await json(admin("/auth/groups", { method: "POST", json: { name } }), 201)).uuid;
    return (await json(admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name } }), 201))
      .uuid as string;
  };
  const join = (p: string, u: TestUser, role: string) =>
    json(
      admin(`/auth/projects/${p}/members`, { method: "POST", json: { user_uuid: u.uuid, role_uuids: [role] } }),
      200,
    );

  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminCall(peer);
    project = await newProject("DP");
    other = await newProject("DQ");
    D = `/v1/projects/${project}/dashboards`;
    member = await makeUser(peer, admin, "dash-member");
    reader = await makeUser(peer, admin, "dash-reader");
    outsider = await makeUser(peer, admin, "dash-outsider");
    await join(project, member, MEMBER);
    await join(project, reader, READ_ONLY);
    await join(other, outsider, MEMBER);
  }, 120_000);
  afterAll(async () => {
    await peer?.stop();
  });

  it("saves a dashboard, reads it back, changes and deletes it", async () => {
    const made = await json(
      member.call(D, { method: "POST", json: { name: "Drive", panels: [plot(["vehicle/speed"], 6)] } }),
      201,
    );
    expect(made).toMatchObject({ name: "Drive", default_edge_uuids: [], panels: [plot(["vehicle/speed"], 6)] });
    expect(made.uuid).toMatch(/^[0-9a-f-]{36}$/);
    const list = await json(reader.call(D), 200);
    expect(list.items.map((d: { uuid: string }) => d.uuid)).toEqual([made.uuid]);
    expect(list.page.total_count).toBe(1);

    const panels = [
      plot(["vehicle/speed", "vehicle/engine_rpm"]),
      { kind: "map", series: [{ data_type: "json", data_id: "gnss/position" }], width: 6, height: 360 },
      { kind: "table", series: [{ data_type: "json", data_id: "imu", field: "/acc/x" }], width: 6, height: 240 },
      { kind: "log", series: [{ data_type: "string", data_id: "log/event" }], width: 12, height: 300 },
    ];
    const changed = await json(
      member.call(`${D}/${made.uuid}`, { method: "PATCH", json: { name: "Drive 2", panels } }),
      200,
    );
    expect(changed).toMatchObject({ uuid: made.uuid, name: "Drive 2", panels });
    expect(await json(member.call(`${D}/${made.uuid}`), 200)).toEqual(changed);

    expect((await member.call(`${D}/${made.uuid}`, { method: "DELETE" })).status).toBe(204);
    expectError(await member.call(`${D}/${made.uuid}`), 404, "not_found");
    expectError(await member.call(`${D}/${made.uuid}`, { method: "DELETE" }), 404, "not_found");
  });

  it("makes one dashboard the default of an edge, and another in its place", async () => {
    const a = await json(
      member.call(D, { method: "POST", json: { name: "A", panels: [], default_edge_uuids: [edge.toUpperCase()] } }),
      201,
    );
    expect(a.default_edge_uuids).toEqual([edge]);
    const b = await json(member.call(D, { method: "POST", json: { name: "B", panels: [] } }), 201);
    await json(member.call(`${D}/${b.uuid}`, { method: "PATCH", json: { default_edge_uuids: [edge] } }), 200);
    const byName = async () =>
      Object.fromEntries(
        (await json(member.call(D), 200)).items.map((d: { name: string; default_edge_uuids: string[] }) => [
          d.name,
          d.default_edge_uuids,
        ]),
      );
    expect(await byName()).toEqual({ A: [], B: [edge] });
    // A change that leaves default_edge_uuids out keeps them.
    await json(member.call(`${D}/${b.uuid}`, { method: "PATCH", json: { name: "B2" } }), 200);
    expect(await byName()).toEqual({ A: [], B2: [edge] });
    expect((await member.call(`${D}/${b.uuid}`, { method: "DELETE" })).status).toBe(204);
    expect(await byName()).toEqual({ A: [] });
    expect((await member.call(`${D}/${a.uuid}`, { method: "DELETE" })).status).toBe(204);
  });

  it("refuses bad panels and names with the fields at fault", async () => {
    const bad = async (body: unknown, field: string) => {
      const r = await member.call(D, { method: "POST", json: body });
      expectError(r, 400, "invalid_request");
      expect(JSON.stringify(r.body.properties ?? {})).toContain(field);
    };
    await bad({ name: "", panels: [] }, "name");
    await bad({ name: "x", panels: [{ ...plot(["a"]), kind: "pie" }] }, "kind");
    await bad({ name: "x", panels: [plot(["a"], 13)] }, "width");
    await bad(
      { name: "x", panels: [{ ...plot(["a"]), series: [{ data_type: "json", data_id: "a", field: "x" }] }] },
      "field",
    );
    await bad({ name: "x", panels: [], default_edge_uuids: ["not-a-uuid"] }, "default_edge_uuids");
    // Another project's edge is refused; an edge of this project, or a UUID naming no edge, is taken.
    const theirs = (await json(admin("/auth/edges", { method: "POST", json: { name: "dash-theirs" } }), 201)).uuid;
    await json(admin(`/auth/projects/${other}/edges`, { method: "POST", json: { edge_name: "dash-theirs" } }), 200);
    await bad({ name: "x", panels: [], default_edge_uuids: [theirs] }, "default_edge_uuids");
    const label = { edge_uuid: theirs, data_type: "float64", data_id: "a", display_name: "A", unit: "" };
    const r = await member.call(`/v1/projects/${project}/series_labels`, { method: "PUT", json: label });
    expectError(r, 400, "invalid_request");
    expect(Object.keys(r.body.properties ?? {})).toEqual(["edge_uuid"]);
    expectError(await member.call(`${D}/${uuid()}`), 404, "not_found");
    expectError(await admin(`/v1/projects/${uuid()}/dashboards`), 404, "not_found");
    expect((await json(member.call(D), 200)).items).toEqual([]);
  });

  it("keeps members of other projects out, and lets read-only members only read", async () => {
    const made = await json(member.call(D, { method: "POST", json: { name: "Mine", panels: [plot(["x"])] } }), 201);
    expectError(await outsider.call(D), 403, "forbidden");
    expectError(await outsider.call(`${D}/${made.uuid}`), 403, "forbidden");
    expectError(
      await outsider.call(`${D}/${made.uuid}`, { method: "PATCH", json: { name: "theirs" } }),
      403,
      "forbidden",
    );
    expectError(await outsider.call(`${D}/${made.uuid}`, { method: "DELETE" }), 403, "forbidden");
    // Through their own project's path the dashboard does not exist.
    expectError(await outsider.call(`/v1/projects/${other}/dashboards/${made.uuid}`), 404, "not_found");
    expectError(
      await outsider.call(`/v1/projects/${other}/dashboards/${made.uuid}`, { method: "DELETE" }),
      404,
      "not_found",
    );
    expect((await json(outsider.call(`/v1/projects/${other}/dashboards`), 200)).items).toEqual([]);
    // Read-only members read it but cannot change it.
    expect((await json(reader.call(`${D}/${made.uuid}`), 200)).name).toBe("Mine");
    expectError(await reader.call(`${D}/${made.uuid}`, { method: "PATCH", json: { name: "r" } }), 403, "forbidden");
    expectError(await reader.call(D, { method: "POST", json: { name: "r", panels: [] } }), 403, "forbidden");
    expect((await json(member.call(`${D}/${made.uuid}`), 200)).name).toBe("Mine");
  });

  it("keeps an edge's display names and units, and forgets one set to nothing", async () => {
    const L = `/v1/projects/${project}/series_labels`;
    const speed = {
      edge_uuid: edge,
      data_type: "float64",
      data_id: "vehicle/speed",
      display_name: "Speed",
      unit: "km/h",
    };
    expect(await json(member.call(L, { method: "PUT", json: speed }), 200)).toEqual(speed);
    const lat = {
      edge_uuid: edge,
      data_type: "json",
      data_id: "gnss/position",
      field: "/lat",
      display_name: "",
      unit: "°",
    };
    await json(member.call(L, { method: "PUT", json: lat }), 200);
    expect((await json(reader.call(`${L}?edge_uuid=${edge}`), 200)).items).toEqual([speed, lat]);
    expect((await json(member.call(`${L}?edge_uuid=${uuid()}`), 200)).items).toEqual([]);
    await json(member.call(L, { method: "PUT", json: { ...speed, unit: "m/s" } }), 200);
    await json(member.call(L, { method: "PUT", json: { ...lat, unit: " " } }), 200);
    expect((await json(member.call(`${L}?edge_uuid=${edge}`), 200)).items).toEqual([{ ...speed, unit: "m/s" }]);

    const r = await member.call(L, { method: "PUT", json: { ...speed, unit: "x".repeat(33) } });
    expectError(r, 400, "invalid_request");
    expect(Object.keys(r.body.properties ?? {})).toContain("unit");
    expectError(await member.call(L), 400, "invalid_request");
    expectError(await outsider.call(`${L}?edge_uuid=${edge}`), 403, "forbidden");
    expectError(await outsider.call(L, { method: "PUT", json: speed }), 403, "forbidden");
    expectError(await reader.call(L, { method: "PUT", json: speed }), 403, "forbidden");
    // Another project's labels of the same edge are its own.
    expect((await json(outsider.call(`/v1/projects/${other}/series_labels?edge_uuid=${edge}`), 200)).items).toEqual([]);
  });
});
