// The supervisor in the running daemon: machines are spawned, updated and stopped by settings changes
// made over the API (no restart), streams get the session the connection machine obtained from a
// the real cloud peer, and states/update_time follow the machines.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../machines/vocabulary.js";
import { fakeOpener } from "../support/agent-fakes.js";
import { startTestAgent, type TestAgent } from "../support/agent.js";
import { startRealCloud, type RealCloud } from "../support/real-cloud.js";

const upstreams = fakeOpener<{ direction: string; settings: { id: string }; session: Session }>();
const downstreams = fakeOpener<{ direction: string; settings: { id: string }; session: Session }>();
const upIpcs = fakeOpener<{ direction: string; settings: { id: string } }>();
const uploads = fakeOpener<unknown>();

let t: TestAgent;
let cloud: RealCloud;
beforeAll(async () => {
  cloud = await startRealCloud();
  t = await startTestAgent({
    upstream: upstreams.open,
    downstream: downstreams.open,
    upstreamIpc: upIpcs.open,
    uploader: uploads.open,
  });
});
afterAll(async () => {
  await t?.close();
  await cloud?.close();
});

const callsFor = <P extends { settings: { id: string } }, C extends { params: P }>(
  fake: { calls: C[] },
  id: string,
): C[] => fake.calls.filter((c) => c.params.settings.id === id);
const state = async (path: string) =>
  (await t.api.get<{ code: string; error: string; bitrate: number; update_time: string }>(path)).body;

describe("supervisor", () => {
  it("holds streams in `disconnected` with the reason until the connection has a token", async () => {
    await t.api.post("/upstreams", { id: "u1" });
    await expect
      .poll(() => state("/upstreams/u1/state"))
      .toMatchObject({ code: "disconnected", error: expect.stringContaining("client_secret is not set") });
    expect(callsFor(upstreams, "u1")).toHaveLength(0);
  });

  it("opens streams with the session once the connection authenticates", async () => {
    await t.api.patch("/connection", {
      server_url: cloud.url,
      edge_uuid: cloud.edge.uuid,
      client_secret: cloud.edge.secret,
    });
    await expect.poll(() => callsFor(upstreams, "u1").length).toBe(1);
    const call = callsFor(upstreams, "u1")[0]!;
    // The real token endpoint's answer: an ES256 JWT.
    expect(call.params.session.accessToken).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(call.params.session.connection.server_url).toBe(cloud.url);
    expect(call.params.direction).toBe("upstream");
    expect((await state("/upstreams/u1/state")).code).toBe("disconnected");
    call.cb.opened();
    await expect.poll(() => state("/upstreams/u1/state")).toMatchObject({ code: "quiet", error: "" });
  });

  it("reports traffic as connected with a bitrate, and stamps update_time on changes", async () => {
    const before = await state("/upstreams/u1/state");
    await new Promise((r) => setTimeout(r, 1100)); // update_time has second precision
    const pump = setInterval(() => t.agent.supervisor.data("upstreams", "u1", 500), 100);
    try {
      await expect.poll(() => state("/upstreams/u1/state"), { timeout: 30_000 }).toMatchObject({ code: "connected" });
      await expect
        .poll(async () => (await state("/upstreams/u1/state")).bitrate, { timeout: 30_000 })
        .toBeGreaterThan(0);
    } finally {
      clearInterval(pump);
    }
    expect((await state("/upstreams/u1/state")).update_time > before.update_time).toBe(true);
  });

  it("stops a stream when disabled and starts it again when enabled, without a restart", async () => {
    await t.api.patch("/upstreams/u1", { enabled: false });
    await expect.poll(() => callsFor(upstreams, "u1")[0]!.closed).toBe(true);
    expect((await state("/upstreams/u1/state")).code).toBe("none");
    await t.api.patch("/upstreams/u1", { enabled: true });
    await expect.poll(() => callsFor(upstreams, "u1").length).toBe(2);
  });

  it("reconnects a stream when a setting that shapes the stream changes", async () => {
    await t.api.patch("/upstreams/u1", { qos: "partial" });
    await expect.poll(() => callsFor(upstreams, "u1").length).toBe(3);
    expect(callsFor(upstreams, "u1")[1]!.closed).toBe(true);
    expect(callsFor(upstreams, "u1")[2]!.params.settings).toMatchObject({ qos: "partial" });
  });

  it("reconnects every stream when the connection settings change", async () => {
    await t.api.post("/device-connectors/downstream", { id: "dd", format: "iscp-v2-compat" });
    await t.api.post("/downstreams", { id: "d1", dest_ids: ["dd"] });
    await expect.poll(() => callsFor(downstreams, "d1").length).toBe(1);
    await t.api.patch("/transport", { protocol: "quic" });
    await expect.poll(() => callsFor(upstreams, "u1").length).toBe(4);
    await expect.poll(() => callsFor(downstreams, "d1").length).toBe(2);
    expect(callsFor(downstreams, "d1")[1]!.params.session.transport.protocol).toBe("quic");
  });

  it("stops a deleted stream's machine", async () => {
    await t.api.delete("/downstreams/d1");
    await expect.poll(() => callsFor(downstreams, "d1")[1]!.closed).toBe(true);
  });

  it("starts and stops device-connector channels with their settings", async () => {
    await t.api.post("/device-connectors/upstream", { id: "c1", format: "iscp-v2-compat", dest_ids: ["u1"] });
    await expect.poll(() => callsFor(upIpcs, "c1").length).toBe(1);
    expect((await state("/device-connectors/upstream/c1/state")).code).toBe("disconnected");
    callsFor(upIpcs, "c1")[0]!.cb.opened();
    await expect.poll(async () => (await state("/device-connectors/upstream/c1/state")).code).toBe("quiet");
    await t.api.patch("/device-connectors/upstream/c1", { dest_ids: ["u1", "deferred"] });
    await new Promise((r) => setTimeout(r, 50));
    expect(callsFor(upIpcs, "c1")).toHaveLength(1); // routing change only
    callsFor(upIpcs, "c1")[0]!.cb.failed("connector exited with code 3");
    await expect
      .poll(() => state("/device-connectors/upstream/c1/state"))
      .toMatchObject({ code: "error", error: "connector exited with code 3" });
    await t.api.delete("/device-connectors/upstream/c1");
    await expect.poll(() => callsFor(upIpcs, "c1").every((c) => c.closed)).toBe(true);
  });

  it("keeps a filter's memory across updates and drops the machine on delete", async () => {
    await t.api.post("/filters/upstream", {
      id: "s",
      type: "sampling",
      target: { type: "always" },
      change_to: { type: "sampling", interval_ms: 10 },
    });
    await expect.poll(() => t.agent.supervisor.filterMemory("upstream_filters", "s")).toBeDefined();
    t.agent.supervisor.filterMemory("upstream_filters", "s")!.lastKept.set("a:b", 42);
    await t.api.patch("/filters/upstream/s", { change_to: { type: "sampling", interval_ms: 20 } });
    await new Promise((r) => setTimeout(r, 50));
    expect(t.agent.supervisor.filterMemory("upstream_filters", "s")!.lastKept.get("a:b")).toBe(42);
    await t.api.delete("/filters/upstream/s");
    await expect.poll(() => t.agent.supervisor.filterMemory("upstream_filters", "s")).toBeUndefined();
  });

  it("runs the deferred uploader when data is pending and a session exists", async () => {
    expect((await state("/deferred-upload/state")).code).toBe("none");
    t.agent.supervisor.pending(4096);
    await expect.poll(() => uploads.calls.length).toBe(1);
    expect((await state("/deferred-upload/state")).code).toBe("quiet");
    uploads.last()!.cb.closed("done");
    await expect.poll(async () => (await state("/deferred-upload/state")).code).toBe("none");
  });

  it("brings machines back from the stored settings after a restart", async () => {
    const before = callsFor(upstreams, "u1").length;
    await t.restart();
    await expect.poll(() => callsFor(upstreams, "u1").length, { timeout: 30_000 }).toBe(before + 1);
    expect(callsFor(upstreams, "u1")[before - 1]!.closed).toBe(true);
  });
});
