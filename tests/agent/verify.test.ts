// Verify Connection Settings against a real HTTP server implementing the cloud peer's two endpoints
// (POST /api/auth/oauth2/token with client_credentials, GET /api/auth/edges/me).
// The lead will switch this test to the real cloud peer once its token endpoint is in place.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgent, type TestAgent } from "./harness.js";

const EDGE = "0e4ed8f2-5b7a-4c65-9d8e-2f7f0b2d9a11";
const SECRET = "correct-horse";

/** A stand-in for the cloud peer's auth endpoints. */
function fakeCloud(): Promise<{ url: string; server: http.Server; requests: string[] }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push(`${req.method} ${req.url}`);
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method === "POST" && req.url === "/api/auth/oauth2/token") {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        if (req.headers["content-type"] !== "application/x-www-form-urlencoded") return json(400, { error: "invalid_request" });
        if (form.get("grant_type") !== "client_credentials") return json(400, { error: "unsupported_grant_type" });
        if (form.get("client_id") !== EDGE || form.get("client_secret") !== SECRET)
          return json(401, { error: "invalid_client", error_description: "client authentication failed" });
        return json(200, { access_token: "tok-1", token_type: "Bearer", expires_in: 3600 });
      }
      if (req.method === "GET" && req.url === "/api/auth/edges/me") {
        if (req.headers.authorization !== "Bearer tok-1") return json(401, { type: "unauthorized", title: "authentication required" });
        return json(200, { uuid: EDGE, name: "edge-name-1", nickname: "Edge One", type: "device" });
      }
      json(404, { type: "not_found", title: "resource not found" });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests })),
  );
}

let t: TestAgent;
let cloud: Awaited<ReturnType<typeof fakeCloud>>;
beforeAll(async () => {
  cloud = await fakeCloud();
  t = await startTestAgent();
});
afterAll(async () => {
  await t.close();
  await new Promise((r) => cloud.server.close(r));
});

describe("Verify Connection Settings", () => {
  it("says why when the settings are incomplete", async () => {
    const r = await t.api.post("/connection/verify");
    expect(r.body).toEqual({ verified: false, edge_name: "", edge_nickname: "", error: "client_secret is not set" });
  });

  it("obtains a token with client credentials and reads the edge", async () => {
    await t.api.patch("/connection", { server_url: `${cloud.url}/`, edge_uuid: EDGE, client_secret: SECRET });
    const r = await t.api.post("/connection/verify");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ verified: true, edge_name: "edge-name-1", edge_nickname: "Edge One", error: "" });
    expect(cloud.requests).toContain("POST /api/auth/oauth2/token");
    expect(cloud.requests).toContain("GET /api/auth/edges/me");
  });

  it("answers verified: false with the server's reason for a wrong secret", async () => {
    await t.api.patch("/connection", { client_secret: "wrong" });
    const r = await t.api.post<{ verified: boolean; error: string }>("/connection/verify");
    expect(r.status).toBe(200);
    expect(r.body.verified).toBe(false);
    expect(r.body.error).toContain("token request rejected (401): invalid_client: client authentication failed");
  });

  it("the connection machine authenticates with the stored settings", async () => {
    await t.api.patch("/connection", { client_secret: SECRET });
    await expect.poll(() => t.agent.supervisor.connectionReport()?.code, { timeout: 5000 }).toBe("connected");
    await t.api.patch("/connection", { client_secret: "wrong-again" });
    await expect.poll(() => t.agent.supervisor.connectionReport(), { timeout: 5000 }).toMatchObject({ code: "error", error: expect.stringContaining("401") });
  });
});
