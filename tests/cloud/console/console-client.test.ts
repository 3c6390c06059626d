// The console's OAuth client `console` over plain HTTP: registered at start (also on a database made
// before it existed), authorization code + PKCE back to <public URL>/console/, refresh with rotation,
// and a revocation that also ends the browser's sign-in session.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { CookieJar, signInThroughPage } from "../oauth/browser.js";
import { adminToken, createUser, form } from "../oauth/helpers.js";

const b64url = (b: Buffer) => b.toString("base64url");

describe("the console's OAuth client", () => {
  let peer: TestPeer;
  let user: { uuid: string; name: string; password: string };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));

  beforeAll(async () => {
    peer = await startTestPeer({ dataDir });
    user = await createUser(peer, await adminToken(peer));
  });
  afterAll(async () => {
    await peer?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** One authorization request from the console; signs in on the page when asked to. Returns the redirect. */
  async function authorize(
    jar: CookieJar,
    verifier: string,
    state: string,
  ): Promise<{ location: URL; signedIn: boolean }> {
    const q = new URLSearchParams({
      response_type: "code",
      client_id: "console",
      redirect_uri: `${peer.url}/console/`,
      state,
      code_challenge: b64url(crypto.createHash("sha256").update(verifier).digest()),
      code_challenge_method: "S256",
    });
    let res = await jar.fetch(`${peer.url}/api/auth/oauth2/authorization?${q}`);
    let signedIn = false;
    if (res.headers.get("location")?.startsWith("/api/auth/oauth2/sign-in")) {
      res = await signInThroughPage(jar, peer.url, res.headers.get("location")!, user.name, user.password);
      signedIn = true;
    }
    // After the page, the browser goes back through the authorization endpoint.
    if (res.headers.get("location")?.startsWith("/api/auth/oauth2/authorization"))
      res = await jar.fetch(new URL(res.headers.get("location")!, peer.url).toString());
    expect([302, 303]).toContain(res.status);
    return { location: new URL(res.headers.get("location")!, peer.url), signedIn };
  }

  const token = (fields: Record<string, string>) =>
    fetch(`${peer.url}/api/auth/oauth2/token`, form({ ...fields, client_id: "console" }));

  it("runs the PKCE flow to /console/, refreshes with rotation, and sign-out ends the session", async () => {
    const jar = new CookieJar();
    const verifier = b64url(crypto.randomBytes(32));
    const first = await authorize(jar, verifier, "s1");
    expect(first.signedIn).toBe(true);
    expect(`${first.location.origin}${first.location.pathname}`).toBe(`${peer.url}/console/`);
    expect(first.location.searchParams.get("state")).toBe("s1");
    const code = first.location.searchParams.get("code")!;
    // No secret, but the verifier is required.
    expect(
      (
        await token({
          grant_type: "authorization_code",
          code,
          redirect_uri: `${peer.url}/console/`,
          code_verifier: "x".repeat(43),
        })
      ).status,
    ).toBe(400);
    const second = await authorize(jar, verifier, "s2");
    expect(second.signedIn).toBe(false); // the sign-in session skips the page
    const t = await (
      await token({
        grant_type: "authorization_code",
        code: second.location.searchParams.get("code")!,
        redirect_uri: `${peer.url}/console/`,
        code_verifier: verifier,
      })
    ).json();
    expect(t.refresh_token).toBeTruthy();
    // The token carries the user's own scopes (no cap by the client).
    const me = await peer.api("/auth/users/me", { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(me.status).toBe(200);
    const rotated = await (await token({ grant_type: "refresh_token", refresh_token: t.refresh_token })).json();
    expect(rotated.refresh_token).toBeTruthy();
    expect(rotated.refresh_token).not.toBe(t.refresh_token);

    const revoked = await jar.fetch(
      `${peer.url}/api/auth/oauth2/revocation`,
      form({ token: rotated.refresh_token, token_type_hint: "refresh_token", client_id: "console" }),
    );
    expect(revoked.status).toBe(200);
    expect((await token({ grant_type: "refresh_token", refresh_token: rotated.refresh_token })).status).toBe(400);
    // Signed out: the next authorization request asks for the password again.
    expect((await authorize(jar, verifier, "s3")).signedIn).toBe(true);
  });

  it("refuses a redirect URI other than <public URL>/console/", async () => {
    const q = new URLSearchParams({
      response_type: "code",
      client_id: "console",
      redirect_uri: `${peer.url}/console/evil`,
      state: "s",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    });
    const res = await fetch(`${peer.url}/api/auth/oauth2/authorization?${q}`, { redirect: "manual" });
    expect(res.status).toBe(400);
  });

  it("is registered again at start on a database that lacks it, once", async () => {
    const consoleClients = async () =>
      (
        await (
          await peer.api("/auth/clients?per_page=200", {
            headers: { authorization: `Bearer ${await adminToken(peer)}` },
          })
        ).json()
      ).items.filter((c: { client_id: string }) => c.client_id === "console");
    // (The stored URI is the public URL known at start; the resolver uses the current one.)
    expect(await consoleClients()).toMatchObject([
      {
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        redirect_uris: [expect.stringMatching(/\/console\/$/)],
      },
    ]);
    await peer.svc.db.run("DELETE FROM oauth_clients WHERE client_id = 'console'");
    for (let i = 0; i < 2; i++) {
      await peer.stop();
      peer = await startTestPeer({ dataDir });
      expect(await consoleClients()).toHaveLength(1);
    }
  });
});
