// Prometheus metrics of a real cloud peer: the named series with sensible values after token requests,
// REST calls and a persisted iSCP upstream; who may read /metrics on the main port; --metrics-listen.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QoS } from "../../../proto/wire/message.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { edgeToken, makeEdge } from "../org/helpers.js";
import { adminToken, caller, uuid, type Call } from "../measurements/helpers.js";
import { metric, samples } from "../../support/prometheus.js";

const PROJECT = "00000000-0000-0000-0000-000000000000";

let peer: TestPeer;
let admin: string;
let call: Call;
let edge: { uuid: string; secret: string };

beforeAll(async () => {
  peer = await startTestPeer();
  admin = await adminToken(peer);
  call = caller(peer, admin);
  edge = await makeEdge(call, "metrics-edge");
});
afterAll(async () => {
  await peer?.stop();
});

/** /metrics on the main port from this host (no forwarding header): served without credentials. */
const scrape = async (url = `${peer.url}/metrics`, headers: Record<string, string> = {}) => {
  const r = await fetch(url, { headers });
  return { status: r.status, type: r.headers.get("content-type"), text: await r.text() };
};

describe("cloud metrics", () => {
  it("exposes the default process metrics and every named series in the Prometheus text format", async () => {
    const s = await scrape();
    expect(s.status).toBe(200);
    expect(s.type).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of [
      "process_cpu_user_seconds_total",
      "nodejs_eventloop_lag_seconds",
      "cloud_iscp_connections",
      "cloud_iscp_streams",
      "cloud_points_stored_total",
      "cloud_chunks_stored_total",
      "cloud_storage_commit_seconds",
      "cloud_storage_bytes",
      "cloud_http_requests_total",
      "cloud_http_request_duration_seconds",
      "cloud_tokens_issued_total",
      "cloud_access_checks_total",
    ])
      expect(s.text).toContain(`# TYPE ${name} `);
    expect(metric(s.text, "cloud_storage_bytes", { part: "database" })).toBeGreaterThan(0);
    expect(metric(s.text, "cloud_storage_free_bytes")).toBeGreaterThan(0);
  });

  it("counts issued tokens by grant type, and requests by method, route template and status", async () => {
    expect((await edgeToken(peer, edge)).status).toBe(200);
    expect((await edgeToken(peer, edge)).status).toBe(200);
    expect((await edgeToken(peer, { ...edge, secret: "wrong" })).status).toBe(401);
    const me = await call("/auth/users/me");
    expect((await call(`/auth/users/${me.body.uuid}`)).status).toBe(200);
    expect((await call("/no/such/api?secret=x")).status).toBe(404);
    const s = (await scrape()).text;
    expect(metric(s, "cloud_tokens_issued_total", { grant_type: "client_credentials" })).toBe(2);
    expect(metric(s, "cloud_http_requests_total", { method: "POST", route: "/auth/oauth2/token", status: "200" })).toBe(
      2,
    );
    expect(metric(s, "cloud_http_requests_total", { method: "POST", route: "/auth/oauth2/token", status: "401" })).toBe(
      1,
    );
    expect(
      metric(s, "cloud_http_requests_total", { method: "GET", route: "/auth/users/{user_uuid}", status: "200" }),
    ).toBe(1);
    expect(metric(s, "cloud_http_requests_total", { method: "GET", route: "unmatched", status: "404" })).toBe(1);
    expect(
      metric(s, "cloud_http_request_duration_seconds_count", { method: "GET", route: "/auth/users/me", status: "200" }),
    ).toBeGreaterThanOrEqual(1);
    // Route labels are templates, never raw URLs.
    const routes = new Set(
      samples(s)
        .filter((x) => x.name === "cloud_http_requests_total")
        .map((x) => x.labels.route!),
    );
    for (const r of routes)
      expect(
        r === "unmatched" || r === "/metrics" || (r.startsWith("/") && !r.includes(me.body.uuid) && !r.includes("?")),
      ).toBe(true);
    expect(s).not.toContain(me.body.uuid);
  });

  it("counts access decisions: allowed for the admin, denied for an edge on a user API", async () => {
    const before = (await scrape()).text;
    const token = (await edgeToken(peer, edge)).body.access_token as string;
    expect((await call("/auth/users")).status).toBe(200);
    expect((await fetch(`${peer.url}/api/auth/users`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(
      403,
    );
    const after = (await scrape()).text;
    const delta = (result: string) =>
      (metric(after, "cloud_access_checks_total", { result }) ?? 0) -
      (metric(before, "cloud_access_checks_total", { result }) ?? 0);
    expect(delta("allowed")).toBeGreaterThanOrEqual(1);
    expect(delta("denied")).toBe(1);
  });

  it("shows an iSCP connection and upstream while they are open, and the points and chunks stored", async () => {
    const before = (await scrape()).text;
    const token = (await edgeToken(peer, edge)).body.access_token as string;
    const client = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${peer.url.replace("http", "ws")}/api/iscp/connect` }),
      token,
      nodeId: edge.uuid,
      projectUuid: PROJECT,
    });
    const session = uuid();
    await client.sendBaseTime(
      { sessionId: session, name: "edge_rtc", priority: 20, elapsedTime: 0n, baseTime: 1_767_323_045_000_000_000n },
      true,
    );
    const up = await client.openUpstream({ sessionId: session, persist: true, qos: QoS.RELIABLE });
    const CHUNKS = 5;
    const POINTS = 7;
    for (let c = 0; c < CHUNKS; c++) {
      up.write(
        { name: "v", type: "float64" },
        Array.from({ length: POINTS }, (_, i) => ({
          elapsedTime: BigInt(c * POINTS + i) * 1000n,
          payload: new Uint8Array(8).fill(i),
        })),
      );
      up.flush();
    }
    expect(await up.waitAcked(10_000)).toBe(true);
    const open = (await scrape()).text;
    expect(metric(open, "cloud_iscp_connections", { transport: "websocket" })).toBe(1);
    expect(metric(open, "cloud_iscp_connections", { transport: "quic" })).toBe(0);
    expect(metric(open, "cloud_iscp_streams", { direction: "upstream" })).toBe(1);
    const grew = (name: string) => (metric(open, name) ?? 0) - (metric(before, name) ?? 0);
    expect(grew("cloud_points_stored_total")).toBe(CHUNKS * POINTS);
    expect(grew("cloud_chunks_stored_total")).toBe(CHUNKS);
    expect(grew("cloud_storage_commit_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(grew("cloud_storage_commit_seconds_count")).toBeLessThanOrEqual(CHUNKS);
    await up.close();
    await client.close();
    await expect
      .poll(async () => metric((await scrape()).text, "cloud_iscp_connections", { transport: "websocket" }))
      .toBe(0);
  });

  it("serves /metrics on the main port to this host and to super users only", async () => {
    const proxied = { "x-forwarded-for": "203.0.113.9" };
    const anonymous = await scrape(undefined, proxied);
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.text)).toMatchObject({ type: "unauthorized" });
    const edgeBearer = (await edgeToken(peer, edge)).body.access_token as string;
    const denied = await scrape(undefined, { ...proxied, authorization: `Bearer ${edgeBearer}` });
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.text)).toMatchObject({ type: "forbidden" });
    expect(denied.text).not.toContain("cloud_");
    const allowed = await scrape(undefined, { ...proxied, "x-intdash-token": admin });
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain("cloud_http_requests_total");
    expect(metric(allowed.text, "cloud_http_requests_total", { route: "/metrics", status: "403" })).toBe(1);
  });

  it("refuses /metrics to a client on another address without credentials", async () => {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal);
    // Without a non-loopback address on this machine, the forwarded-header case above stands for it.
    if (!external) return;
    const open = await startTestPeer({ config: { listen: "0.0.0.0:0" } });
    try {
      const port = new URL(open.url).port;
      expect((await fetch(`http://${external.address}:${port}/metrics`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    } finally {
      await open.stop();
    }
  });
});

describe("--metrics-listen", () => {
  it("serves GET /metrics on a port of its own, and nothing else there", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
    const child = spawn(
      process.execPath,
      [
        path.resolve(import.meta.dirname, "../../../bin/cloud-peer.mjs"),
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
        "--data",
        dataDir,
      ],
      {
        env: { ...process.env, CLOUD_ADMIN_PASSWORD: "Admin-password-1", CLOUD_LOG_LEVEL: "warn" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      let out = "";
      const urls = await new Promise<{ main: string; metrics: string }>((resolve, reject) => {
        child.stdout!.on("data", (c) => {
          out += String(c);
          const main = /listening on (http:\/\/\S+)/.exec(out)?.[1];
          const metrics = /metrics on (http:\/\/\S+)/.exec(out)?.[1];
          if (main && metrics) resolve({ main, metrics });
        });
        child.stderr!.on("data", (c) => (out += String(c)));
        void exited.then(() => reject(new Error(`cloud-peer exited: ${out}`)));
      });
      expect(new URL(urls.metrics).port).not.toBe(new URL(urls.main).port);
      expect((await fetch(`${urls.main}/api/health/alive`)).status).toBe(200);
      const s = await scrape(urls.metrics, { "x-forwarded-for": "203.0.113.9" });
      expect(s.status).toBe(200);
      expect(
        metric(s.text, "cloud_http_requests_total", { method: "GET", route: "/health/alive", status: "200" }),
      ).toBe(1);
      const other = await fetch(urls.metrics.replace("/metrics", "/api/health/alive"));
      expect(other.status).toBe(404);
      expect(await other.json()).toMatchObject({ type: "not_found" });
    } finally {
      child.kill("SIGTERM");
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
