// Verify Connection Settings against a real HTTP server implementing the cloud peer's two endpoints
// (POST /api/auth/oauth2/token with client_credentials, GET /api/auth/edges/me).
// The lead will switch this test to the real cloud peer once its token endpoint is in place.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE, SECRET, fakeCloud } from "./fake-cloud.js";
import { startTestAgent, type TestAgent } from "./harness.js";

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
