// Defaults and limits at their boundaries and one past them; the 400/404/409 bodies; malformed input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiResponse } from "../../../runtime/cli/client.js";
import { startTestAgent, type TestAgent } from "../../support/agent.js";

let t: TestAgent;
beforeAll(async () => {
  t = await startTestAgent();
  await t.api.post("/upstreams", { id: "u" });
  await t.api.post("/device-connectors/downstream", { id: "dd", format: "iscp-v2-compat" });
});
afterAll(async () => {
  await t.close();
});

function expectProblem(r: ApiResponse, status: number, detail: string | RegExp, instance?: string) {
  expect(r.status).toBe(status);
  const body = r.body as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["detail", "instance", "status", "title"]);
  expect(body.status).toBe(status);
  if (typeof detail === "string") expect(body.detail).toContain(detail);
  else expect(body.detail).toMatch(detail);
  if (instance) expect(body.instance).toBe(instance);
  if (status === 404) expect(body.title).toBe("Resource is not found");
}

let n = 0;
const fresh = () => `x${++n}`;

describe("limits at the boundary and one past it", () => {
  it.each([
    [1, 201],
    [100, 201],
    [0, 400],
    [101, 400],
  ])("id of %i characters → %i", async (len, status) => {
    const id = len === 0 ? "" : `${fresh()}${"a".repeat(100)}`.slice(0, len);
    const r = await t.api.post("/upstreams", { id });
    expect(r.status).toBe(status);
    if (status === 400) expectProblem(r, 400, /^id: /);
    else await t.api.delete(`/upstreams/${encodeURIComponent(id)}`);
  });

  it("counts id length in characters (code points), not UTF-16 units", async () => {
    const id = "\u{1F697}".repeat(100); // 100 characters, 200 UTF-16 code units
    expect((await t.api.post("/upstreams", { id })).status).toBe(201);
    expect((await t.api.get(`/upstreams/${encodeURIComponent(id)}`)).status).toBe(200);
    expect((await t.api.delete(`/upstreams/${encodeURIComponent(id)}`)).status).toBe(204);
    expectProblem(await t.api.post("/upstreams", { id: `${id}a` }), 400, /^id: /);
    const ipc = await t.api.post("/device-connectors/downstream", {
      id: fresh(),
      format: "iscp-v2-compat",
      ipc: { type: "fifo", path: `${t.dir}/emoji.fifo` },
    });
    expectProblem(await t.api.post("/downstreams", { id: fresh(), dest_ids: [`${id}a`] }), 400, /^dest_ids\[0\]: /);
    expect(ipc.status).toBe(201);
  });

  it("reserves the upstream id `deferred`", async () => {
    expectProblem(await t.api.post("/upstreams", { id: "deferred" }), 400, /^id: .*reserved/);
  });

  it.each([
    ["flush_interval", 1, 201],
    ["flush_interval", 100000, 201],
    ["flush_interval", 0, 400],
    ["flush_interval", 100001, 400],
    ["flush_interval", 2.5, 400],
    ["flush_interval", "5", 400],
    ["qos", "partial", 201],
    ["qos", "reliable", 400],
    ["flush_policy", "immediately", 201],
    ["flush_policy", "never", 400],
  ])("upstream %s = %j → %i", async (field, value, status) => {
    const r = await t.api.post("/upstreams", { id: fresh(), [field]: value });
    expect(r.status).toBe(status);
    if (status === 400) expectProblem(r, 400, new RegExp(`^${field}: `));
    else expect((r.body as Record<string, unknown>)[field]).toBe(value);
  });

  it("forces recover to false when persist is false, on create and on update", async () => {
    const id = fresh();
    expect((await t.api.post("/upstreams", { id, persist: false, recover: true })).body).toMatchObject({
      persist: false,
      recover: false,
    });
    expect((await t.api.patch(`/upstreams/${id}`, { recover: true })).body).toMatchObject({ recover: false });
    expect((await t.api.patch(`/upstreams/${id}`, { persist: true, recover: true })).body).toMatchObject({
      persist: true,
      recover: true,
    });
    expect((await t.api.patch(`/upstreams/${id}`, { persist: false })).body).toMatchObject({ recover: false });
  });

  it.each([
    [{ send_queue_size: 1 }, 200],
    [{ send_queue_size: 4294967295 }, 200],
    [{ send_queue_size: 0 }, 400],
    [{ send_queue_size: 4294967296 }, 400],
    [{ compression_level: 9, compression_window_bits: 15 }, 200],
    [{ compression_level: 0, compression_window_bits: 0 }, 200],
    [{ compression_level: 10 }, 400],
    [{ compression_window_bits: 8 }, 400],
    [{ protocol: "quic" }, 200],
    [{ protocol: "websocket" }, 200],
    [{ protocol: "tcp" }, 400],
  ])("transport %j → %i", async (body, status) => {
    const r = await t.api.patch("/transport", body);
    expect(r.status).toBe(status);
    if (status === 400) expectProblem(r, 400, new RegExp(`^${Object.keys(body)[0]}: `), "/api/v1/transport");
    else expect(r.body).toMatchObject(body);
  });

  it.each([
    [{ client_secret: "" }, "client_secret"],
    [{ server_url: "not a url" }, "server_url"],
    [{ server_url: "ftp://example.com" }, "server_url"],
    [{ project_uuid: "1234" }, "project_uuid"],
    [{ edge_uuid: 5 }, "edge_uuid"],
  ])("connection %j → 400 naming %s", async (body, field) => {
    expectProblem(await t.api.patch("/connection", body), 400, new RegExp(`^${field}: `));
  });

  it.each([
    ["v1/10/", 201],
    ["a", 201],
    ["/a", 400],
    ["a//b", 400],
    ["a/#", 400],
    ["a+", 400],
  ])("data_name_prefix %j → %i", async (prefix, status) => {
    const r = await t.api.post("/device-connectors/upstream", {
      id: fresh(),
      format: "iscp-v2-compat",
      dest_ids: ["u"],
      data_name_prefix: prefix,
    });
    expect(r.status).toBe(status);
    if (status === 400) expectProblem(r, 400, /^data_name_prefix: /);
  });

  it.each([
    [["u"], 201, ""],
    [["deferred"], 201, ""],
    [["a".repeat(100)], 400, "dest_ids[0]: upstream"],
    [["a".repeat(101)], 400, "dest_ids[0]: "],
    [[""], 400, "dest_ids[0]: "],
    [["u", "nope"], 400, 'dest_ids[1]: upstream "nope" does not exist'],
    [["u", "u"], 400, "dest_ids: "],
  ])("upstream IPC dest_ids %j → %i", async (dest_ids, status, detail) => {
    const r = await t.api.post("/device-connectors/upstream", { id: fresh(), format: "iscp-v2-compat", dest_ids });
    expect(r.status).toBe(status);
    if (status === 400) expectProblem(r, 400, detail);
  });

  it("requires format and dest_ids on create", async () => {
    expectProblem(await t.api.post("/device-connectors/upstream", { id: fresh(), dest_ids: [] }), 400, /^format: /);
    expectProblem(
      await t.api.post("/device-connectors/upstream", { id: fresh(), format: "iscp-v2-compat" }),
      400,
      /^dest_ids: /,
    );
    expectProblem(
      await t.api.post("/device-connectors/upstream", { id: fresh(), format: "csv", dest_ids: [] }),
      400,
      /^format: /,
    );
    expectProblem(await t.api.post("/downstreams", { id: fresh() }), 400, /^dest_ids: /);
  });

  it("checks downstream dest_ids against downstream IPC channels", async () => {
    expect((await t.api.post("/downstreams", { id: fresh(), dest_ids: ["dd"] })).status).toBe(201);
    expectProblem(
      await t.api.post("/downstreams", { id: fresh(), dest_ids: ["u"] }),
      400,
      'dest_ids[0]: downstream device-connector IPC "u" does not exist',
    );
  });

  it.each([
    [{ data_storage_capacity: 1 }, 200],
    [{ data_storage_capacity: Number.MAX_SAFE_INTEGER }, 200],
    [{ data_storage_capacity: 0 }, 400],
    [{ data_storage_capacity: 1.5 }, 400],
    [{ priority: "higher_than_realtime" }, 200],
    [{ priority: "highest" }, 400],
    [{ limit_data_storage: "no" }, 400],
  ])("deferred upload %j → %i", async (body, status) => {
    const r = await t.api.patch("/deferred-upload", body);
    expect(r.status).toBe(status);
    if (status === 400) expectProblem(r, 400, new RegExp(`^${Object.keys(body)[0]}: `));
  });

  it("validates filter variants and the type/change_to agreement", async () => {
    const ok = {
      id: fresh(),
      type: "sampling",
      target: { type: "always" },
      change_to: { type: "sampling", interval_ms: 10 },
    };
    expect((await t.api.post("/filters/upstream", ok)).status).toBe(201);
    expectProblem(
      await t.api.post("/filters/upstream", { ...ok, id: fresh(), type: "rename" }),
      400,
      /^change_to\.type: /,
    );
    expectProblem(
      await t.api.post("/filters/upstream", { ...ok, id: fresh(), target: { type: "bogus" } }),
      400,
      /^target/,
    );
    expectProblem(await t.api.post("/filters/upstream", { ...ok, id: fresh(), target: undefined }), 400, /^target: /);
    expectProblem(await t.api.patch(`/filters/upstream/${ok.id}`, { type: "rename" }), 400, /^change_to\.type: /);
  });
});

describe("limits of the designed objects (ipc, launch, filter target and change_to)", () => {
  const filter = (target: object, change_to: object) => ({
    id: fresh(),
    type: (change_to as { type: string }).type,
    target,
    change_to,
  });
  const name = (n: number) => ({ type: "name", patterns: Array.from({ length: n }, (_, i) => `p${i}/#`) });
  const sampling = (interval_ms: unknown) => ({ type: "sampling", interval_ms });

  it.each([
    [name(1), sampling(1), 201, ""],
    [name(100), sampling(86_400_000), 201, ""],
    [name(0), sampling(1), 400, "target"],
    [name(101), sampling(1), 400, "target"],
    [{ type: "name", patterns: ["a/#/b"] }, sampling(1), 400, "target"],
    [{ type: "always" }, sampling(0), 400, "change_to"],
    [{ type: "always" }, sampling(86_400_001), 400, "change_to"],
    [{ type: "always" }, { type: "rename" }, 400, "change_to"],
    [{ type: "always", patterns: ["#"] }, sampling(1), 400, "target"],
  ])("filter target %j, change_to %j → %i", async (target, change_to, status, field) => {
    const r = await t.api.post("/filters/downstream", filter(target, change_to));
    expect(r.status).toBe(status);
    if (status === 400) expectProblem(r, 400, new RegExp(`^${field}`));
  });

  it("fills the defaults of h264-essential-nal-units and of launch", async () => {
    const h = await t.api.post(
      "/filters/upstream",
      filter({ type: "type", patterns: ["h264_frame/#"] }, { type: "h264-essential-nal-units" }),
    );
    expect(h.body).toMatchObject({ change_to: { type: "h264-essential-nal-units", keep_sei: false, keep_aud: false } });
    const c = await t.api.post("/device-connectors/downstream", {
      id: fresh(),
      format: "logger-msg",
      launch: { command: "/bin/true" },
    });
    expect((c.body as { launch: unknown }).launch).toEqual({
      command: "/bin/true",
      args: [],
      environment: {},
      restart: {
        policy: "always",
        initial_backoff_ms: 500,
        max_backoff_ms: 30000,
        multiplier: 2,
        reset_after_ms: 10000,
        max_restarts: 0,
      },
      stop_timeout_ms: 5000,
    });
  });

  it.each([
    [
      { restart: { initial_backoff_ms: 10, max_backoff_ms: 3_600_000, multiplier: 10, max_restarts: 1_000_000 } },
      201,
      "",
    ],
    [{ restart: { initial_backoff_ms: 9 } }, 400, "launch.restart.initial_backoff_ms"],
    [{ restart: { max_backoff_ms: 3_600_001 } }, 400, "launch.restart.max_backoff_ms"],
    [{ restart: { multiplier: 10.5 } }, 400, "launch.restart.multiplier"],
    [{ restart: { policy: "sometimes" } }, 400, "launch.restart.policy"],
    [{ stop_timeout_ms: 600_000 }, 201, ""],
    [{ stop_timeout_ms: 600_001 }, 400, "launch.stop_timeout_ms"],
    [{ environment: { CONNECTOR_GOOD_1: "x" } }, 201, ""],
    [{ environment: { "1BAD": "x" } }, 400, "launch.environment"],
    [{ command: "" }, 400, "launch.command"],
  ])("launch %j → %i", async (extra, status, field) => {
    const r = await t.api.post("/device-connectors/downstream", {
      id: fresh(),
      format: "logger-msg",
      launch: { command: "/bin/true", ...extra },
    });
    expect(r.status).toBe(status);
    if (status === 400) expectProblem(r, 400, new RegExp(`^${field.replace(/\./g, "\\.")}`));
  });

  it.each([
    [{ type: "fifo", path: "relative.fifo" }, "ipc.path"],
    [{ type: "socket", path: "/tmp/x" }, "ipc.type"],
    [{ type: "fifo" }, "ipc.path"],
  ])("ipc %j → 400 naming %s", async (ipc, field) => {
    expectProblem(
      await t.api.post("/device-connectors/downstream", { id: fresh(), format: "logger-msg", ipc }),
      400,
      new RegExp(`^${field.replace(/\./g, "\\.")}`),
    );
  });
});

describe("404, 409 and 400 bodies", () => {
  const collections = [
    "/upstreams",
    "/downstreams",
    "/device-connectors/upstream",
    "/device-connectors/downstream",
    "/filters/upstream",
    "/filters/downstream",
  ];

  it.each(collections)("%s: unknown ids give 404 naming the id on get, update, delete and state", async (base) => {
    const cases: Array<[string, string, unknown]> = [
      ["GET", "", undefined],
      ["PATCH", "", { enabled: false }],
      ["DELETE", "", undefined],
      ...(base.startsWith("/filters") ? [] : [["GET", "/state", undefined] as [string, string, unknown]]),
    ];
    for (const [method, suffix, body] of cases) {
      const r = await t.api.request(method, `${base}/missing-id${suffix}`, body);
      expectProblem(r, 404, '"missing-id" is not found', `/api/v1${base}/missing-id${suffix}`);
    }
  });

  it("duplicate ids give 409", async () => {
    expectProblem(await t.api.post("/upstreams", { id: "u" }), 409, 'upstream "u" already exists');
    expectProblem(
      await t.api.post("/device-connectors/downstream", { id: "dd", format: "logger-msg" }),
      409,
      '"dd" already exists',
    );
  });

  it("deleting a referenced item gives 409 naming who references it", async () => {
    await t.api.post("/device-connectors/upstream", { id: "ref-ipc", format: "iscp-v2-compat", dest_ids: ["u"] });
    expectProblem(await t.api.delete("/upstreams/u"), 409, 'upstream device-connector IPC "ref-ipc"');
    await t.api.post("/downstreams", { id: "ref-down", dest_ids: ["dd"] });
    expectProblem(await t.api.delete("/device-connectors/downstream/dd"), 409, 'downstream "ref-down"');
  });

  it("two channels cannot share a FIFO path", async () => {
    const ipc = { type: "fifo", path: `${t.dir}/shared.fifo` };
    expect(
      (await t.api.post("/device-connectors/downstream", { id: fresh(), format: "iscp-v2-compat", ipc })).status,
    ).toBe(201);
    expectProblem(
      await t.api.post("/device-connectors/upstream", { id: fresh(), format: "iscp-v2-compat", dest_ids: [], ipc }),
      409,
      /^ipc\.path: /,
    );
  });

  it("the id cannot be changed by an update", async () => {
    expectProblem(await t.api.patch("/upstreams/u", { id: "other" }), 400, /^id: cannot be changed/);
    expect((await t.api.patch("/upstreams/u", { id: "u" })).status).toBe(200);
  });

  it("a path id over 100 characters is a 400 naming id", async () => {
    expectProblem(await t.api.get(`/upstreams/${"a".repeat(101)}`), 400, /^id: /);
  });

  it("malformed input gives 400s, never a crash", async () => {
    expectProblem(await t.api.request("POST", "/upstreams", undefined, "{not json"), 400, "body: not valid JSON");
    expectProblem(await t.api.request("POST", "/upstreams", undefined, "[1,2]"), 400, /^body: /);
    expectProblem(await t.api.request("POST", "/upstreams", undefined, "null"), 400, /^body: /);
    expectProblem(await t.api.request("PATCH", "/transport", undefined, '"str"'), 400, /^body: /);
    expectProblem(
      await t.api.post("/upstreams", { id: fresh(), flush_intervall: 5 }),
      400,
      /^flush_intervall: is unexpected/,
    );
    expectProblem(await t.api.get("/upstreams/-/states?enabled=yes"), 400, /^enabled: /);
    expectProblem(
      await t.api.request("POST", "/upstreams", undefined, JSON.stringify({ id: "x".repeat(2_000_000) })),
      413,
      /body/,
    );
    expectProblem(await t.api.get("/no/such/api"), 404, "no API at GET /api/v1/no/such/api");
    const wrongMethod = await t.api.request("PUT", "/upstreams/u");
    expectProblem(wrongMethod, 405, "PUT is not allowed on /api/v1/upstreams/u");
    expect(String(wrongMethod.headers.allow).split(", ").sort()).toEqual(["DELETE", "GET", "PATCH"]);
    expectProblem(await t.api.get("/upstreams/%E0%A4%A"), 404, /is not found/);
    expect((await t.api.get("/version")).status).toBe(200);
  });

  it("deeply nested bodies give 400, not 500", async () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    expectProblem(
      await t.api.request("POST", "/upstreams", undefined, deep(100_000)),
      400,
      /^body: nested deeper than/,
    );
    expectProblem(
      await t.api.request("POST", "/upstreams", undefined, `{"id": "q", "enabled": ${deep(10_000)}}`),
      400,
      /^body: nested deeper than/,
    );
    const launch = { command: "/bin/true", restart: { policy: "never" } };
    const ok = await t.api.post("/device-connectors/downstream", {
      id: fresh(),
      format: "logger-msg",
      ipc: { type: "fifo", path: `${t.dir}/n.fifo` },
      launch,
    });
    expect(ok.status).toBe(201);
  });

  it("strings that are not well-formed Unicode give 400 naming the field (they could not be stored as sent)", async () => {
    expectProblem(await t.api.request("POST", "/upstreams", undefined, '{"id": "a\\ud800"}'), 400, /^id: /);
    expectProblem(await t.api.request("POST", "/upstreams", undefined, '{"id": "b\\udc00x"}'), 400, /^id: /);
    const body = `{"id": "${fresh()}", "format": "logger-msg", "launch": {"command": "/bin/true", "args": ["ok", "\\udfff"]}}`;
    expectProblem(
      await t.api.request("POST", "/device-connectors/downstream", undefined, body),
      400,
      /^launch\.args\[1\]: /,
    );
    expectProblem(await t.api.request("POST", "/upstreams", undefined, '{"\\ud800": 1}'), 400, /^body: /);
    expect((await t.api.post("/upstreams", { id: `ok-\u{1F697}` })).status).toBe(201); // a surrogate pair is fine
  });
});
