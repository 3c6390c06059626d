// Malformed input at the OAuth endpoints never yields a 500 or a crash.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";

describe("OAuth endpoints under malformed input", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    peer = await startTestPeer();
  });
  afterAll(async () => {
    await peer.stop();
  });
  const post = (
    p: string,
    body: string,
    headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" },
  ) => fetch(`${peer.url}/api${p}`, { method: "POST", headers, body, redirect: "manual" });

  it("token endpoint", async () => {
    const bodies = [
      "",
      "%",
      "grant_type",
      "grant_type=%E0%A4%A",
      "grant_type=password&username=" + "a".repeat(10_000),
      "grant_type=authorization_code&code=",
      "grant_type=refresh_token&refresh_token=" + "x".repeat(5000),
      "grant_type=password&username=admin&password=x&tenant_uuid=nope",
      "grant_type=client_credentials&client_id=" + "c".repeat(300),
      "grant_type=__proto__",
      "grant_type=constructor",
      "grant_type=toString&__proto__=x",
      "grant_type=authorization_code&client_id=first-party&code=abc&redirect_uri=x&code_verifier=" + "~".repeat(200),
      "grant_type=client_credentials&client_id=x&client_certification=-----BEGIN CERTIFICATE-----garbage",
    ];
    for (const body of bodies) {
      const res = await post("/auth/oauth2/token", body);
      expect(res.status, body.slice(0, 60)).toBeGreaterThanOrEqual(400);
      expect(res.status, body.slice(0, 60)).toBeLessThan(500);
      const json: any = await res.json();
      expect(typeof json.error === "string" || typeof json.type === "string").toBe(true);
    }
    for (const auth of [
      "Basic",
      "Basic !!!",
      "Basic " + Buffer.from("nocolon").toString("base64"),
      "Basic " + Buffer.from("%zz:%zz").toString("base64"),
      "Bearer x",
    ]) {
      const res = await post("/auth/oauth2/token", "grant_type=client_credentials", {
        "content-type": "application/x-www-form-urlencoded",
        authorization: auth,
      });
      expect(res.status, auth).toBeGreaterThanOrEqual(400);
      expect(res.status, auth).toBeLessThan(500);
    }
    const huge = await post("/auth/oauth2/token", "a".repeat(70 * 1024));
    expect(huge.status).toBe(413);
    const koa = await post("/auth/oauth2/token?x=1", "a".repeat(70 * 1024));
    expect(koa.status).toBe(413);
    const text = await post("/auth/oauth2/token", "grant_type=password", { "content-type": "text/plain" });
    expect(text.status).toBe(400);
    expect((await fetch(`${peer.url}/api/auth/oauth2/token`)).status).toBe(405);
  });

  it("a cut-short upload to the token endpoint does not hang the server", async () => {
    const { port } = new URL(peer.url);
    await new Promise<void>((resolve) => {
      const s = net.connect(Number(port), "127.0.0.1", () => {
        s.write(
          "POST /api/auth/oauth2/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=",
        );
        setTimeout(() => s.destroy(), 50);
      });
      s.on("close", () => resolve());
      s.on("error", () => resolve());
    });
    expect((await fetch(`${peer.url}/api/auth/oauth2/jwks`)).status).toBe(200);
  });

  it("authorization endpoint, sign-in page and revocation", async () => {
    for (const q of [
      "%",
      "client_id=%E0%A4%A",
      "client_id=" + "x".repeat(5000),
      "state=" + "s".repeat(5000),
      "__proto__=1&client_id=x",
      "client_id[]=a",
    ]) {
      for (const p of ["/auth/oauth2/authorization", "/auth/oauth2/sign-in"]) {
        const res = await fetch(`${peer.url}/api${p}?${q}`, { redirect: "manual" });
        expect(res.status, `${p}?${q.slice(0, 40)}`).toBeLessThan(500);
      }
    }
    for (const body of ["", "%", "csrf=" + "c".repeat(5000), "username=a&password=b&csrf=x"]) {
      const res = await post("/auth/oauth2/sign-in?client_id=x", body);
      expect(res.status).toBeLessThan(500);
    }
    for (const body of [
      "",
      "client_id=first-party&token_type_hint=weird&token=x",
      "client_id=first-party&token=a.b.c",
      "client_id=" + "x".repeat(1000) + "&token=y",
    ]) {
      const res = await post("/auth/oauth2/revocation", body);
      expect(res.status, body.slice(0, 40)).toBeLessThan(500);
    }
  });
});
