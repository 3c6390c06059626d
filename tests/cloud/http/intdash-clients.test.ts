// What older intdash clients rely on: the Python SDK 2.1 sends API tokens in `X-Edge-Token` and reads
// GET /api/v1/version, warning when the version is below 1.9.0.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, caller, createUser, expectError } from "../accounts/helpers.js";

const semver = (v: string) => v.split(".").map(Number);
const atLeast = (v: string, min: string) => {
  const [a, b] = [semver(v), semver(min)];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return true;
};

describe("older intdash clients", () => {
  let peer: TestPeer;
  let token: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    token = await adminToken(peer);
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("accepts an API token in X-Edge-Token like X-Intdash-Token, and refuses a wrong one", async () => {
    const viaEdgeHeader = caller(peer, token, "X-Edge-Token");
    const me = await viaEdgeHeader("/auth/users/me");
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body.name).toBe("admin");
    // A guarded operation too, not only the own account.
    const created = await createUser(viaEdgeHeader, "edge-header-user");
    expect(created.name).toBe("edge-header-user");
    expectError(await caller(peer, "not-a-token", "X-Edge-Token")("/auth/users/me"), 401, "unauthorized");
  });

  it("reports the intdash API version it follows (at least 1.9.0) and its own package version", async () => {
    const res = await peer.api("/v1/version");
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.version).toBe("2.6.0");
    expect(body.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(atLeast(body.version, "1.9.0")).toBe(true);
    const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
    expect(body.cloud_peer_version).toBe(pkg.version);
  });

  it("answers 404 for iSCP version 1 and /api/v1/authn, which are out of scope", async () => {
    const ws = await peer.api("/v1/ws/measurements", { headers: { "X-Intdash-Token": token } });
    expect(ws.status).toBe(404);
    const authn = await peer.api("/v1/authn", {
      method: "POST",
      json: { username: "admin", password: "Admin-password-1" },
    });
    expect(authn.status).toBe(404);
  });
});
