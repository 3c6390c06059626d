// Every operation of the command API over a real Unix socket, and the OpenAPI document's operationIds.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgent, type TestAgent } from "../../support/agent.js";

const OPERATION_IDS = [
  "getVersion",
  "getConnectionSettings",
  "updateConnectionSettings",
  "verifyConnectionSettings",
  "getTransportSettings",
  "updateTransportSettings",
  "listUpstreamSettings",
  "createUpstreamSettings",
  "getUpstreamSettings",
  "updateUpstreamSettings",
  "deleteUpstreamSettings",
  "listUpstreamStates",
  "getUpstreamState",
  "listDownstreamSettings",
  "createDownstreamSettings",
  "getDownstreamSettings",
  "updateDownstreamSettings",
  "deleteDownstreamSettings",
  "listDownstreamStates",
  "getDownstreamState",
  "listUpstreamIpcSettings",
  "createUpstreamIpcSettings",
  "getUpstreamIpcSettings",
  "updateUpstreamIpcSettings",
  "deleteUpstreamIpcSettings",
  "listUpstreamIpcStates",
  "getUpstreamIpcState",
  "listDownstreamIpcSettings",
  "createDownstreamIpcSettings",
  "getDownstreamIpcSettings",
  "updateDownstreamIpcSettings",
  "deleteDownstreamIpcSettings",
  "listDownstreamIpcStates",
  "getDownstreamIpcState",
  "listUpstreamFilters",
  "createUpstreamFilter",
  "getUpstreamFilter",
  "updateUpstreamFilter",
  "deleteUpstreamFilter",
  "listDownstreamFilters",
  "createDownstreamFilter",
  "getDownstreamFilter",
  "updateDownstreamFilter",
  "deleteDownstreamFilter",
  "getDeferredUploadSettings",
  "updateDeferredUploadSettings",
  "getDeferredUploadState",
  "listMeasurements",
  "getMeasurement",
  "deleteMeasurement",
];

let t: TestAgent;
beforeAll(async () => {
  t = await startTestAgent();
});
afterAll(async () => {
  await t.close();
});

describe("command API operations", () => {
  it("serves the version with the JSON content type", async () => {
    const r = await t.api.get("/version");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ version: "1.2.1" });
    expect(r.headers["content-type"]).toBe("application/json; charset=UTF-8");
  });

  it("documents exactly the spec's operationIds in an OpenAPI 3.1 document", async () => {
    const r = await t.api.get<{
      openapi: string;
      paths: Record<string, Record<string, { operationId: string }>>;
      components: { schemas: Record<string, unknown> };
    }>("/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe("3.1.0");
    const ids = Object.values(r.body.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(ids.sort()).toEqual([...OPERATION_IDS].sort());
    expect(r.body.components.schemas).toHaveProperty("UpstreamSettings");
    expect(r.body.components.schemas).toHaveProperty("Error");
    expect(JSON.stringify(r.body)).not.toContain("#/$defs/");
  });

  it("gets and updates connection settings, with defaults first", async () => {
    const zero = "00000000-0000-0000-0000-000000000000";
    const before = await t.api.get("/connection");
    expect(before.body).toEqual({
      server_url: "https://example.intdash.invalid",
      project_uuid: zero,
      edge_uuid: zero,
      client_secret: "",
    });
    const edge = "11111111-2222-3333-4444-555555555555";
    const r = await t.api.patch("/connection", { edge_uuid: edge, client_secret: "s3cret" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ edge_uuid: edge, client_secret: "s3cret", project_uuid: zero });
    expect((await t.api.get("/connection")).body).toEqual(r.body);
  });

  it("gets and updates transport settings", async () => {
    const off = { compression_level: 0, compression_window_bits: 0 };
    expect((await t.api.get("/transport")).body).toEqual({ protocol: "websocket", send_queue_size: 4096, ...off });
    const r = await t.api.patch("/transport", { protocol: "quic" });
    expect(r.body).toEqual({ protocol: "quic", send_queue_size: 4096, ...off });
  });

  it("creates, lists, gets, updates and deletes upstreams, and reports their states", async () => {
    const created = await t.api.post("/upstreams", { id: "up-1" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: "up-1",
      enabled: true,
      recover: true,
      persist: true,
      qos: "unreliable",
      flush_policy: "interval",
      flush_interval: 5,
    });
    await t.api.post("/upstreams", { id: "up-2", enabled: false });
    expect((await t.api.get<{ items: { id: string }[] }>("/upstreams")).body.items.map((i) => i.id)).toEqual([
      "up-1",
      "up-2",
    ]);
    expect((await t.api.get("/upstreams/up-1")).body).toEqual(created.body);
    const upd = await t.api.patch("/upstreams/up-1", { qos: "partial", flush_policy: "immediately" });
    expect(upd.body).toMatchObject({ id: "up-1", qos: "partial", flush_policy: "immediately", flush_interval: 5 });

    const states =
      await t.api.get<
        { id: string; enabled: boolean; code: string; bitrate: number; update_time: string; error: string }[]
      >("/upstreams/-/states");
    expect(states.body.map((s) => s.id)).toEqual(["up-1", "up-2"]);
    for (const s of states.body) {
      expect(Object.keys(s).sort()).toEqual(["bitrate", "code", "enabled", "error", "id", "update_time"]);
      expect(s.update_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    expect((await t.api.get<{ id: string }[]>("/upstreams/-/states?enabled=true")).body.map((s) => s.id)).toEqual([
      "up-1",
    ]);
    expect((await t.api.get<{ id: string }[]>("/upstreams/-/states?enabled=false")).body.map((s) => s.id)).toEqual([
      "up-2",
    ]);
    const one = await t.api.get<{ id: string; code: string }>("/upstreams/up-2/state");
    expect(one.body).toMatchObject({ id: "up-2", enabled: false, code: "none" });

    expect((await t.api.delete("/upstreams/up-2")).status).toBe(204);
    expect((await t.api.get("/upstreams/up-2")).status).toBe(404);
  });

  it("creates downstream IPC channels, downstreams naming them, and reports both states", async () => {
    const ipc = await t.api.post("/device-connectors/downstream", { id: "dc-down", format: "iscp-v2-compat" });
    expect(ipc.status).toBe(201);
    expect(ipc.body).toMatchObject({
      id: "dc-down",
      enabled: true,
      data_name_prefix: "",
      format: "iscp-v2-compat",
      ipc: { type: "fifo" },
    });
    expect((ipc.body as { ipc: { path: string } }).ipc.path).toMatch(/\/ipc\/down-dc-down\.fifo$/);
    const down = await t.api.post("/downstreams", { id: "down-1", dest_ids: ["dc-down"] });
    expect(down.status).toBe(201);
    expect(down.body).toEqual({ id: "down-1", enabled: true, dest_ids: ["dc-down"], qos: "unreliable", filters: [] });
    const filters = [
      { src_edge_uuid: "11111111-2222-3333-4444-555555555555", data_filters: [{ type: "#", name: "1/+" }] },
    ];
    expect((await t.api.patch("/downstreams/down-1", { filters })).body).toMatchObject({ filters });
    expect((await t.api.get<{ items: unknown[] }>("/downstreams")).body.items).toHaveLength(1);
    expect((await t.api.get("/downstreams/down-1")).status).toBe(200);
    expect((await t.api.get<unknown[]>("/downstreams/-/states")).body).toHaveLength(1);
    expect((await t.api.get("/downstreams/down-1/state")).body).toMatchObject({ id: "down-1", enabled: true });
    expect((await t.api.get<unknown[]>("/device-connectors/downstream/-/states?enabled=true")).body).toHaveLength(1);
    const ipcState = await t.api.get("/device-connectors/downstream/dc-down/state");
    expect(Object.keys(ipcState.body as object).sort()).toEqual(["code", "enabled", "error", "id", "update_time"]);
    expect((await t.api.get<{ items: unknown[] }>("/device-connectors/downstream")).body.items).toHaveLength(1);
    expect((await t.api.get("/device-connectors/downstream/dc-down")).status).toBe(200);
    expect(
      (await t.api.patch("/device-connectors/downstream/dc-down", { data_name_prefix: "v1/" })).body,
    ).toMatchObject({ data_name_prefix: "v1/" });
    expect((await t.api.delete("/downstreams/down-1")).status).toBe(204);
    expect((await t.api.delete("/device-connectors/downstream/dc-down")).status).toBe(204);
  });

  it("creates upstream IPC channels with launch objects and removes launch with null", async () => {
    await t.api.post("/upstreams", { id: "up-ipc-target" });
    const launch = { command: "/bin/sh", args: ["-c", "sleep 1"], environment: { CONNECTOR_A: "1" } };
    const r = await t.api.post("/device-connectors/upstream", {
      id: "dc-up",
      format: "logger-msg",
      dest_ids: ["up-ipc-target", "deferred"],
      data_name_prefix: "v1/10/",
      ipc: { type: "fifo", path: `${t.dir}/dc-up.fifo` },
      launch,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      id: "dc-up",
      dest_ids: ["up-ipc-target", "deferred"],
      launch: { ...launch, restart: { policy: "always" } },
    });
    expect((await t.api.get<{ items: unknown[] }>("/device-connectors/upstream")).body.items).toHaveLength(1);
    expect((await t.api.get("/device-connectors/upstream/dc-up")).status).toBe(200);
    const noLaunch = await t.api.patch("/device-connectors/upstream/dc-up", { launch: null });
    expect(noLaunch.body).not.toHaveProperty("launch");
    expect((await t.api.get<unknown[]>("/device-connectors/upstream/-/states")).body).toHaveLength(1);
    expect((await t.api.get("/device-connectors/upstream/dc-up/state")).body).toMatchObject({
      id: "dc-up",
      enabled: true,
    });
    expect((await t.api.delete("/device-connectors/upstream/dc-up")).status).toBe(204);
    expect((await t.api.delete("/upstreams/up-ipc-target")).status).toBe(204);
  });

  it.each(["upstream", "downstream"])("creates, lists, gets, updates and deletes %s filters in order", async (dir) => {
    const base = `/filters/${dir}`;
    const f1 = {
      id: "f1",
      type: "sampling",
      target: { type: "name", patterns: ["1/#"] },
      change_to: { type: "sampling", interval_ms: 100 },
    };
    const created = await t.api.post(base, f1);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ ...f1, enabled: true });
    await t.api.post(base, {
      id: "f0",
      type: "rename",
      target: { type: "always" },
      change_to: { type: "rename", add_prefix: "x/" },
    });
    expect((await t.api.get<{ items: { id: string }[] }>(base)).body.items.map((f) => f.id)).toEqual(["f1", "f0"]);
    expect((await t.api.get(`${base}/f1`)).body).toEqual({ ...f1, enabled: true });
    const upd = await t.api.patch(`${base}/f1`, { enabled: false, change_to: { type: "sampling", interval_ms: 250 } });
    expect(upd.body).toMatchObject({ enabled: false, change_to: { interval_ms: 250 } });
    expect((await t.api.delete(`${base}/f1`)).status).toBe(204);
    expect((await t.api.delete(`${base}/f0`)).status).toBe(204);
    expect((await t.api.get<{ items: unknown[] }>(base)).body.items).toEqual([]);
  });

  it("gets and updates deferred-upload settings and state", async () => {
    expect((await t.api.get("/deferred-upload")).body).toEqual({
      priority: "same_as_realtime",
      limit_data_storage: true,
      data_storage_capacity: 102400,
    });
    const r = await t.api.patch("/deferred-upload", { priority: "lower_than_realtime", data_storage_capacity: 2048 });
    expect(r.body).toEqual({ priority: "lower_than_realtime", limit_data_storage: true, data_storage_capacity: 2048 });
    const s = await t.api.get("/deferred-upload/state");
    expect(s.body).toMatchObject({ code: "none", error: "", bitrate: 0 });
    expect(Object.keys(s.body as object).sort()).toEqual(["bitrate", "code", "error", "update_time"]);
  });

  it("lists, gets and deletes measurements (in the order taken) with their pending data", async () => {
    const q = t.agent.dataPath.queue;
    const a = "aaaaaaaa-0000-4000-8000-000000000001";
    const b = "bbbbbbbb-0000-4000-8000-000000000002";
    q.startMeasurement(a, 1767312000123456789n);
    q.startMeasurement(b, 1767225600000000001n);
    const seq = q.openSequence(a, "deferred", "cccccccc-0000-4000-8000-000000000003", true, false);
    const point = { name: "n", type: "bytes", payload: new Uint8Array(16), elapsedNs: 0, srcId: "x" };
    for (let i = 0; i < 3; i++) await q.append(seq.ord, [point]).durable;
    const list = await t.api.get<{ items: { uuid: string }[] }>("/measurements");
    expect(list.body.items.map((m) => m.uuid)).toEqual([a, b]);
    const got = await t.api.get<{ pending_data_size: number }>(`/measurements/${a}`);
    expect(got.body).toMatchObject({ uuid: a, base_time: "2026-01-02T00:00:00.123456789Z", chunk_count: 3 });
    expect(got.body.pending_data_size).toBeGreaterThan(3 * 16);
    expect((await t.api.get(`/measurements/${b}`)).body).toEqual({
      uuid: b,
      base_time: "2026-01-01T00:00:00.000000001Z",
      pending_data_size: 0,
      chunk_count: 0,
    });
    expect((await t.api.delete(`/measurements/${a}`)).status).toBe(204);
    expect(q.getSequence(seq.ord)).toBeUndefined();
    const gone = await t.api.get(`/measurements/${a}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({
      title: "Resource is not found",
      status: 404,
      detail: `measurement "${a}" is not found`,
      instance: `/api/v1/measurements/${a}`,
    });
    expect((await t.api.delete(`/measurements/${a}`)).status).toBe(404);
  });

  it("answers verification with verified: false and a reason when the server cannot be reached", async () => {
    await t.api.patch("/connection", { server_url: "http://127.0.0.1:9" });
    const r = await t.api.post<{ verified: boolean; error: string }>("/connection/verify");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ verified: false, edge_name: "", edge_nickname: "" });
    expect(r.body.error).toMatch(/cannot reach/);
  });
});
