// The command API's 404, 409 and 400 bodies, and malformed input answered with a 400, never a crash.
import { describe, expect, it } from "vitest";
import { expectProblem, freshIds, validationAgent } from "./helpers.js";

const t = validationAgent();

const fresh = freshIds();

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
