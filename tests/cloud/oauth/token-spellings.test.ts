// The token endpoint has one answer whatever the spelling of its path (case, trailing slash, a query):
// the pre-routing fast path takes every spelling the router gives to the token route, and the route
// itself (reached when no fast path is installed) reads the form with the same reader.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { startTestPeer, type TestPeer } from "../harness.js";
import { ADMIN_PASSWORD } from "./helpers.js";

const SPELLINGS = [
  "/auth/oauth2/token",
  "/auth/oauth2/TOKEN",
  "/auth/oauth2/token/",
  "/Auth/OAuth2/Token/?x=1",
  "/auth/oauth2/token?x=1",
];
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const good = `grant_type=password&username=admin&password=${ADMIN_PASSWORD}`;
const twice = `grant_type=password&username=nobody&username=admin&password=${ADMIN_PASSWORD}`;

function expectOneEndpoint(peerOf: () => TestPeer): void {
  it.each(SPELLINGS)("POST %s: a repeated username is refused, a good form gets a token", async (p) => {
    const peer = peerOf();
    const repeated = await peer.api(p, { method: "POST", headers: FORM, body: twice });
    expect(repeated.status).toBe(400);
    expect(await repeated.json()).toMatchObject({
      error: "invalid_request",
      error_description: "parameter username is repeated",
    });
    const ok = await peer.api(p, { method: "POST", headers: FORM, body: good });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("cache-control")).toBe("no-store");
    expect(await ok.json()).toMatchObject({ token_type: "bearer", access_token: expect.any(String) });
    const json = await peer.api(p, { method: "POST", json: { grant_type: "password" } });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({
      error: "invalid_request",
      error_description: expect.stringMatching(/form-urlencoded/),
    });
  });
}

describe("token endpoint spellings through the fast path", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    peer = await startTestPeer();
  });
  afterAll(async () => peer.stop());
  expectOneEndpoint(() => peer);

  it("other methods and paths still reach the application (405 with Allow, 404)", async () => {
    const get = await peer.api("/auth/oauth2/TOKEN");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toMatch(/POST/);
    expect((await peer.api("/auth/oauth2/tokens", { method: "POST", headers: FORM, body: good })).status).toBe(404);
  });

  it("the RFC 8414 metadata answers at its path, with or without a trailing slash", async () => {
    for (const p of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/"]) {
      const res = await fetch(`${peer.url}${p}`);
      expect(res.status, p).toBe(200);
      expect(await res.json()).toMatchObject({ token_endpoint: `${peer.url}/api/auth/oauth2/token` });
    }
  });
});

describe("token endpoint spellings through the route alone", () => {
  // The same peer's Koa application served without the fast paths in front of it.
  let peer: TestPeer;
  let app: http.Server;
  let url: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    app = http.createServer(peer.application);
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => app.close(r));
    await peer.stop();
  });
  expectOneEndpoint(() => ({ ...peer, api: (p, init) => peer.api(p, init, url) }));
});
