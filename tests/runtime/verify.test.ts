// Verify Connection Settings against the real cloud peer (client_credentials at its token endpoint with
// the edge UUID and secret, then GET /api/auth/edges/me).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgent, type TestAgent } from "../support/agent.js";
import { startRealCloud, type RealCloud } from "../support/real-cloud.js";

let t: TestAgent;
let cloud: RealCloud;
let EDGE: string;
let SECRET: string;
beforeAll(async () => {
  cloud = await startRealCloud();
  ({ uuid: EDGE, secret: SECRET } = cloud.edge);
  t = await startTestAgent();
});
afterAll(async () => {
  await t?.close();
  await cloud?.close();
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
  });

  it("answers verified: false with the server's reason for a wrong secret", async () => {
    await t.api.patch("/connection", { client_secret: "wrong" });
    const r = await t.api.post<{ verified: boolean; error: string }>("/connection/verify");
    expect(r.status).toBe(200);
    expect(r.body.verified).toBe(false);
    expect(r.body.error).toContain("token request rejected (401): invalid_client: unknown client or wrong credentials");
  });

  it("the connection machine authenticates with the stored settings", async () => {
    await t.api.patch("/connection", { client_secret: SECRET });
    await expect.poll(() => t.agent.supervisor.connectionReport()?.code, { timeout: 30_000 }).toBe("connected");
    await t.api.patch("/connection", { client_secret: "wrong-again" });
    await expect
      .poll(() => t.agent.supervisor.connectionReport(), { timeout: 30_000 })
      .toMatchObject({ code: "error", error: expect.stringContaining("401") });
  });
});
