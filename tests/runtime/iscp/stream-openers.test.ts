// Streams open real iSCP connections: the agent (with its default, real openers) authenticates at a
// stand-in cloud (real HTTP token endpoint) and connects over WebSocket to a real iSCP broker
// (cloud/iscp) on the same server. States follow the real connections.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ensureQuicCertificate } from "../../../cloud/iscp/service/quic-cert.js";
import { attachIscpBroker, startIscpQuic, type IscpBroker } from "../../../cloud/iscp/broker/broker.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { ResultCode } from "../../../proto/wire/message.js";
import { EDGE, SECRET, fakeCloud } from "../../support/fake-cloud.js";
import { startTestAgent, type TestAgent } from "../../support/agent.js";

const REFUSED_PROJECT = "22222222-2222-4222-8222-222222222222";
const SOURCE = "5b0a1c1e-9f8e-4d2c-8a55-0123456789ab";
let t: TestAgent;
let cloud: Awaited<ReturnType<typeof fakeCloud>>;
let broker: IscpBroker;
const connects: { token: string; nodeId: string; project: string }[] = [];

beforeAll(async () => {
  cloud = await fakeCloud();
  broker = attachIscpBroker(cloud.server, {
    authenticate: async (token, project, nodeId) => {
      connects.push({ token, nodeId: nodeId ?? "", project });
      if (project === REFUSED_PROJECT)
        return { ok: false, resultCode: ResultCode.AUTH_FAILED, resultString: "project not allowed" };
      return token === "tok-1"
        ? { ok: true, subject: { kind: "edge", uuid: nodeId ?? "x" } }
        : { ok: false, resultCode: ResultCode.AUTH_FAILED, resultString: "bad token" };
    },
  });
  t = await startTestAgent();
});
afterAll(async () => {
  await t.close();
  await broker.close();
  cloud.server.closeAllConnections();
  await new Promise((r) => cloud.server.close(r));
});

const state = async (p: string) => (await t.api.get<{ code: string; error: string; bitrate: number }>(p)).body;

describe("iSCP links", () => {
  it("an upstream connects with the edge's token, node id and project and reports quiet", async () => {
    await t.api.post("/upstreams", { id: "up" });
    await t.api.patch("/connection", {
      server_url: cloud.url,
      edge_uuid: EDGE,
      client_secret: SECRET,
      project_uuid: "11111111-1111-4111-8111-111111111111",
    });
    await expect
      .poll(() => state("/upstreams/up/state"), { timeout: 30_000 })
      .toMatchObject({ code: "quiet", error: "" });
    expect(connects).toContainEqual({ token: "tok-1", nodeId: EDGE, project: "11111111-1111-4111-8111-111111111111" });
  });

  it("a downstream opens its iSCP downstream and reports traffic from a real upstream", async () => {
    await t.api.post("/device-connectors/downstream", { id: "dc", format: "iscp-v2-compat" });
    await t.api.post("/downstreams", {
      id: "down",
      dest_ids: ["dc"],
      filters: [{ src_edge_uuid: SOURCE, data_filters: [{ type: "#", name: "#" }] }],
    });
    await expect.poll(() => state("/downstreams/down/state"), { timeout: 30_000 }).toMatchObject({ code: "quiet" });

    const sender = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${cloud.url.replace("http", "ws")}/api/iscp/connect` }),
      token: "tok-1",
      nodeId: SOURCE,
      projectUuid: "11111111-1111-4111-8111-111111111111",
      reconnect: false,
    });
    try {
      const up = await sender.openUpstream({ sessionId: "s1" });
      const pump = setInterval(() => {
        up.write({ name: "1/speed", type: "float64" }, [{ elapsedTime: 1n, payload: new Uint8Array(1000) }]);
        up.flush();
      }, 50);
      try {
        await expect
          .poll(() => state("/downstreams/down/state"), { timeout: 30_000 })
          .toMatchObject({ code: "connected" });
        await expect
          .poll(async () => (await state("/downstreams/down/state")).bitrate, { timeout: 30_000 })
          .toBeGreaterThan(0);
      } finally {
        clearInterval(pump);
      }
    } finally {
      await sender.close();
    }
  });

  it("reconnects over QUIC when the transport settings say quic", async () => {
    const tls = ensureQuicCertificate(path.join(t.dir, "quic"));
    const port = Number(new URL(cloud.url).port);
    const quic = await startIscpQuic({
      broker,
      host: "127.0.0.1",
      port, // UDP, the same number as the HTTP port: the agent derives it from server_url
      key: readFileSync(tls.key, "utf8"),
      cert: readFileSync(tls.cert, "utf8"),
      authenticate: async () => ({ ok: true, subject: { kind: "edge", uuid: EDGE } }),
    });
    try {
      const before = connects.length;
      await t.api.patch("/transport", { protocol: "quic" });
      await expect
        .poll(() => state("/upstreams/up/state"), { timeout: 30_000 })
        .toMatchObject({ code: "quiet", error: "" });
      expect(connects.length).toBeGreaterThan(before); // the shared broker authenticated the QUIC connection
      await t.api.patch("/transport", { protocol: "websocket" });
      await expect.poll(() => state("/upstreams/up/state"), { timeout: 30_000 }).toMatchObject({ code: "quiet" });
    } finally {
      await quic.close();
    }
  });

  it("compresses its iSCP connections when the transport settings give a compression level", async () => {
    const queries: string[] = [];
    const seen = (req: { url?: string }) => queries.push(new URL(req.url ?? "/", "http://x").search);
    cloud.server.on("upgrade", seen);
    const before = connects.length;
    try {
      await t.api.patch("/transport", { compression_level: 6, compression_window_bits: 12 });
      await expect
        .poll(() => queries.some((q) => q.includes("comp=context-takeover&clevel=6&cwinbits=12")), { timeout: 30_000 })
        .toBe(true);
      // The broker read the compressed ConnectRequest (authenticate saw it) and the upstream open that followed it.
      await expect.poll(() => connects.length, { timeout: 30_000 }).toBeGreaterThan(before);
      await expect
        .poll(() => state("/upstreams/up/state"), { timeout: 30_000 })
        .toMatchObject({ code: "quiet", error: "" });
    } finally {
      cloud.server.off("upgrade", seen);
      await t.api.patch("/transport", { compression_level: 0, compression_window_bits: 0 });
    }
  });

  it("reports a connection the broker refuses as an error with the broker's reason", async () => {
    await t.api.patch("/connection", { project_uuid: REFUSED_PROJECT });
    await expect
      .poll(() => state("/upstreams/up/state"), { timeout: 30_000 })
      .toMatchObject({
        code: "error",
        error: expect.stringContaining("project not allowed"),
      });
  });

  it("holds streams disconnected, with the reason, while the token is refused", async () => {
    await t.api.patch("/connection", { client_secret: "wrong" });
    await expect
      .poll(() => state("/upstreams/up/state"), { timeout: 30_000 })
      .toMatchObject({
        code: "disconnected",
        error: expect.stringContaining("authentication failed: token request rejected (401)"),
      });
  });
});
