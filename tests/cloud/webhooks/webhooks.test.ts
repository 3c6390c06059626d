// A project's webhooks over real sockets: a receiver on port 0 gets signed deliveries for the test call
// and for measurement events, failures are retried with backoff, and the history records each delivery.
import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { json, makeUser, MEMBER } from "../org/helpers.js";
import {
  adminCall,
  chunksMessage,
  createMeasurement,
  expectError,
  uploadProto,
  uuid,
  type Call,
} from "../measurements/helpers.js";
import { holdingTurn, receiver, type Received } from "./helpers.js";

const signed = (secret: string, r: Received) =>
  crypto.createHmac("sha256", secret).update(r.body).digest("base64") === r.headers["x-intdash-signature-256"];

describe("webhooks", () => {
  let peer: TestPeer;
  let admin: Call;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let project: string;
  let H: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminCall(peer);
    rx = await receiver();
    const group = (await json(admin("/auth/groups", { method: "POST", json: { name: "WG" } }), 201)).uuid;
    project = (await json(admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "WP" } }), 201)).uuid;
    H = `/projects/${project}/hooks`;
    peer.svc.webhooks.retry = { attempts: 3, backoffMs: 50 };
  });
  afterAll(async () => {
    await peer?.stop();
    await rx?.close();
  });

  const bodies = (path: string) => rx.got.filter((r) => r.path === path).map((r) => JSON.parse(r.body));

  it("manages hooks: create (secret shown once when generated), list, get, update, disable, enable, delete", async () => {
    const made = await admin(H, { method: "POST", json: { url: rx.url("/a"), measurements_events: true } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({
      url: rx.url("/a"),
      measurements_event: true,
      edges_event: false,
      enabled: true,
      is_shared_global: false,
    });
    expect(made.body.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const own = await admin(H, { method: "POST", json: { url: rx.url("/b"), secret: "my-secret" } });
    expect(own.body.secret).toBeUndefined();
    const list = await admin(H);
    expect(list.body.items.map((h: { uuid: string }) => h.uuid)).toEqual([made.body.uuid, own.body.uuid]);
    expect(list.body.page).toMatchObject({ next: false, prev: false, total_page: 1, total_count: 2 });
    expect(JSON.stringify(list.body)).not.toContain(made.body.secret);
    expect((await admin(`${H}/${own.body.uuid}`)).body).not.toHaveProperty("secret");

    const patched = await admin(`${H}/${own.body.uuid}`, {
      method: "PATCH",
      json: { url: rx.url("/c"), edges_event: true },
    });
    expect(patched.body).toMatchObject({ url: rx.url("/c"), edges_event: true, measurements_event: false });
    expect((await admin(`${H}/${own.body.uuid}/disable`, { method: "PUT" })).body.enabled).toBe(false);
    expect((await admin(`${H}/${own.body.uuid}/enable`, { method: "PUT" })).body.enabled).toBe(true);
    expect((await admin(`${H}/${own.body.uuid}`, { method: "DELETE" })).status).toBe(204);
    expectError(await admin(`${H}/${own.body.uuid}`), 404, "not_found");
    expectError(await admin(H, { method: "POST", json: { url: "ftp://example.test/x" } }), 400, "invalid_request");
    expectError(await admin(H, { method: "POST", json: { url: rx.url("/d"), colour: "red" } }), 400, "invalid_request");
    expectError(await admin(`/projects/${uuid()}/hooks`), 404, "not_found");
    expect((await admin(`${H}/${made.body.uuid}`, { method: "DELETE" })).status).toBe(204);
  });

  it("lets a project's owners manage its hooks, and refuses its other members and outsiders", async () => {
    const owner = await makeUser(peer, admin, "hook-owner");
    const member = await makeUser(peer, admin, "hook-member");
    const outsider = await makeUser(peer, admin, "hook-outsider");
    await json(
      admin(`/auth/projects/${project}/members`, { method: "POST", json: { user_uuid: owner.uuid, role_uuids: [] } }),
      200,
    );
    await json(admin(`/auth/projects/${project}/members/${owner.uuid}/owner`, { method: "PUT" }), 200);
    await json(
      admin(`/auth/projects/${project}/members`, {
        method: "POST",
        json: { user_uuid: member.uuid, role_uuids: [MEMBER] },
      }),
      200,
    );
    const made = await owner.call(H, { method: "POST", json: { url: rx.url("/owner"), measurements_events: true } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect((await owner.call(`${H}/${made.body.uuid}/disable`, { method: "PUT" })).status).toBe(200);
    expectError(await member.call(H), 403, "forbidden");
    expectError(await member.call(H, { method: "POST", json: { url: rx.url("/member") } }), 403, "forbidden");
    expectError(await outsider.call(`${H}/${made.body.uuid}`, { method: "DELETE" }), 403, "forbidden");
    // The owner's rights stop at the project.
    const other = (
      await json(
        admin(
          `/auth/groups/${(await json(admin("/auth/groups", { method: "POST", json: { name: "WG2" } }), 201)).uuid}/projects`,
          { method: "POST", json: { name: "WP2" } },
        ),
        201,
      )
    ).uuid;
    expectError(await owner.call(`/projects/${other}/hooks`), 403, "forbidden");
    expect((await owner.call(`${H}/${made.body.uuid}`, { method: "DELETE" })).status).toBe(204);
  });

  it("sends a signed test delivery and records it", async () => {
    const hook = (
      await admin(H, { method: "POST", json: { url: rx.url("/test"), secret: "s3cret", measurements_events: true } })
    ).body;
    const d = await admin(`${H}/${hook.uuid}/test`, {
      method: "PUT",
      json: { resource_type: "measurement", action: "completed" },
    });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    expect(d.body).toMatchObject({
      hook_uuid: hook.uuid,
      status: "succeeded",
      is_test: true,
      attempts: 1,
      response: { status: 204 },
    });
    const [r] = rx.got.filter((g) => g.path === "/test");
    expect(signed("s3cret", r!)).toBe(true);
    expect(JSON.parse(r!.body)).toMatchObject({
      delivery_uuid: d.body.uuid,
      hook_uuid: hook.uuid,
      resource_type: "measurement",
      action: "completed",
      project_uuid: project,
      is_test: true,
    });
    expect(JSON.parse(r!.body).measurement_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect((await admin(`${H}/${hook.uuid}/hook_deliveries`)).body.items.map((x: { uuid: string }) => x.uuid)).toEqual([
      d.body.uuid,
    ]);
    expect((await admin(`/projects/${project}/hook_deliveries/${d.body.uuid}`)).body).toEqual(d.body);
    // Redelivery sends the same body again, as a new delivery.
    const again = await admin(`/projects/${project}/hook_deliveries/${d.body.uuid}/redeliver`, { method: "PUT" });
    expect(again.body).toMatchObject({ redelivered_by: d.body.uuid, request: { body: r!.body } });
    await expect.poll(() => rx.got.filter((g) => g.path === "/test").length).toBe(2);
    await admin(`${H}/${hook.uuid}`, { method: "DELETE" });
  });

  it("tells hooks of a measurement's creation, update, end, completion and deletion, not of its data", async () => {
    const hook = (
      await admin(H, { method: "POST", json: { url: rx.url("/meas"), secret: "k", measurements_events: true } })
    ).body;
    const P = `/v1/projects/${project}`;
    const m = (await createMeasurement(admin, {}, `${P}/measurements`)).uuid as string;
    await expect.poll(() => bodies("/meas").map((b) => b.action)).toEqual(["created"]);
    // Deliveries are sent side by side: their order is not promised, so actions are compared as a set.
    const actions = () =>
      bodies("/meas")
        .map((b) => b.action)
        .sort();
    expect(
      (
        await uploadProto(
          admin,
          chunksMessage(m, uuid(), [[{ name: "x", type: "float64", elapsed: 1n, payload: new Uint8Array(8) }]]),
          `${P}/measurements/sequences/chunks`,
        )
      ).status,
    ).toBe(200);
    expect((await admin(`${P}/measurements/${m}`, { method: "PUT", json: { name: "renamed" } })).status).toBe(204);
    expect((await admin(`${P}/measurements/${m}/end`, { method: "PUT" })).status).toBe(200);
    expect((await admin(`${P}/measurements/${m}/complete`, { method: "PUT" })).status).toBe(200);
    expect((await admin(`${P}/measurements/${m}`, { method: "DELETE" })).status).toBe(204);
    await expect.poll(actions).toEqual(["completed", "created", "deleted", "ended", "updated"]);
    for (const r of rx.got.filter((g) => g.path === "/meas")) expect(signed("k", r)).toBe(true);
    expect(
      bodies("/meas").every(
        (b) => b.measurement_uuid === m && b.resource_type === "measurement" && b.is_test === false,
      ),
    ).toBe(true);
    // Disabled: nothing is sent.
    await admin(`${H}/${hook.uuid}/disable`, { method: "PUT" });
    await createMeasurement(admin, {}, `${P}/measurements`);
    await new Promise((r) => setTimeout(r, 300));
    expect(bodies("/meas")).toHaveLength(5);
    await admin(`${H}/${hook.uuid}`, { method: "DELETE" });
  });

  it("tells every action of changes that follow each other before the first is examined, in order", async () => {
    const hook = (await admin(H, { method: "POST", json: { url: rx.url("/race"), measurements_events: true } })).body;
    const P = `/v1/projects/${project}/measurements`;
    const told = (m: string) => bodies("/race").filter((b) => b.measurement_uuid === m);
    const call = async (path: string, method: string, status: number, body?: object) =>
      expect((await admin(path, { method, ...(body ? { json: body } : {}) })).status).toBe(status);
    /**
     * Makes a measurement, then runs the changes while its first event after creation waits for its turn; then
     * expects each action told once, their occurred_at in the order given (deliveries are sent side by side).
     */
    async function expectTold(changes: (path: string) => Promise<void>, actions: string[]) {
      const m = (await createMeasurement(admin, {}, P)).uuid as string;
      await expect.poll(() => told(m).map((b) => b.action)).toEqual(["created"]);
      await holdingTurn(peer, m, () => changes(`${P}/${m}`));
      await expect
        .poll(() =>
          told(m)
            .map((b) => b.action)
            .sort(),
        )
        .toEqual([...actions].sort());
      const at = (action: string) => Date.parse(told(m).find((b) => b.action === action).occurred_at);
      for (let i = 1; i < actions.length; i++) expect(at(actions[i - 1]!)).toBeLessThanOrEqual(at(actions[i]!));
    }

    await expectTold(
      async (m) => {
        await call(`${m}/complete`, "PUT", 200);
        await call(m, "DELETE", 204);
      },
      ["created", "ended", "completed", "deleted"],
    );
    // A sequence expecting nothing yet keeps the ended measurement resending until it expects what it has.
    const seq = uuid();
    await expectTold(
      async (m) => {
        await call(`${m}/sequences/${seq}`, "PUT", 200, {});
        await call(`${m}/end`, "PUT", 200);
        await call(m, "PUT", 204, { name: "renamed" });
        await call(`${m}/sequences/${seq}`, "PUT", 200, { expected_data_points: 0 });
        await call(m, "DELETE", 204);
      },
      ["created", "ended", "updated", "completed", "deleted"],
    );
    await admin(`${H}/${hook.uuid}`, { method: "DELETE" });
  });

  it("retries a failing receiver with backoff, and records a delivery that gives up as failed", async () => {
    const hook = (
      await admin(H, { method: "POST", json: { url: rx.url("/flaky"), secret: "k", measurements_events: true } })
    ).body;
    rx.plan.set("/flaky", [500, 503]);
    await createMeasurement(admin, {}, `/v1/projects/${project}/measurements`);
    const deliveries = async () => (await admin(`${H}/${hook.uuid}/hook_deliveries`)).body.items;
    await expect.poll(async () => (await deliveries())[0]?.status, { timeout: 30_000 }).toBe("succeeded");
    expect((await deliveries())[0]).toMatchObject({ attempts: 3, response: { status: 204 } });
    expect(rx.got.filter((g) => g.path === "/flaky")).toHaveLength(3);

    rx.plan.set("/flaky", [500, 500, 500]);
    await createMeasurement(admin, {}, `/v1/projects/${project}/measurements`);
    await expect
      .poll(async () => (await deliveries()).filter((d: { status: string }) => d.status === "failed").length, {
        timeout: 30_000,
      })
      .toBe(1);
    const failed = (await deliveries()).find((d: { status: string }) => d.status === "failed");
    expect(failed).toMatchObject({ attempts: 3, reason: "the receiver answered 500", response: { status: 500 } });
    expect(failed.finished_at).toBeTruthy();
  });
});
