// The full authorization-code + PKCE flow in a real browser (Debian chromium via playwright-core):
// a small client web app (openid-client) sends the browser to the peer, the user signs in on the
// page by its labelled fields, and the app exchanges the code and calls the API with the token.
import http from "node:http";
import * as oidc from "openid-client";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, bearer, createUser, oidcConfig, passwordToken, registerClient } from "./helpers.js";
import { launchChromium, type TestBrowser } from "../../support/browser.js";

/** The relying party: /login starts the flow, /cb finishes it and shows who signed in. */
async function startClientApp(getConfig: () => oidc.Configuration, peer: () => TestPeer) {
  const pending = new Map<string, string>();
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url!, `http://${req.headers.host}`);
    try {
      if (url.pathname === "/login") {
        const verifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        pending.set(state, verifier);
        const to = oidc.buildAuthorizationUrl(getConfig(), {
          redirect_uri: `${url.origin}/cb`,
          state,
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: "S256",
        });
        res.writeHead(302, { location: to.toString() }).end();
        return;
      }
      if (url.pathname === "/cb") {
        const state = url.searchParams.get("state") ?? "";
        const verifier = pending.get(state);
        pending.delete(state);
        if (!verifier) throw new Error("unknown state");
        const tokens = await oidc.authorizationCodeGrant(getConfig(), url, {
          pkceCodeVerifier: verifier,
          expectedState: state,
        });
        const me: any = await (await peer().api("/auth/users/me", { headers: bearer(tokens.access_token) })).json();
        res.writeHead(200, { "content-type": "text/html" }).end(`<h1 id="who">Signed in as ${me.name}</h1>`);
        return;
      }
      if (url.pathname === "/frame") {
        // A page of this (other) origin trying to frame the peer's sign-in page.
        const query = oidc.buildAuthorizationUrl(getConfig(), {
          redirect_uri: `${url.origin}/cb`,
          state: "framed",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
        }).search;
        res
          .writeHead(200, { "content-type": "text/html" })
          .end(`<iframe id="f" src="${peer().url}/api/auth/oauth2/sign-in${query}"></iframe>`);
        return;
      }
      res.writeHead(404).end();
    } catch (err) {
      res.writeHead(500, { "content-type": "text/plain" }).end(`client error: ${(err as Error).message}`);
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

describe("authorization code + PKCE in a real browser", () => {
  let peer: TestPeer;
  let user: { uuid: string; name: string; password: string };
  let config: oidc.Configuration;
  let app: { server: http.Server; origin: string };
  let context: BrowserContext;
  let browser: TestBrowser;

  beforeAll(async () => {
    peer = await startTestPeer();
    user = await createUser(peer, await adminToken(peer));
    const userToken = (await passwordToken(peer, user.name, user.password)).access_token;
    app = await startClientApp(
      () => config,
      () => peer,
    );
    const client = await registerClient(peer, userToken, {
      name: "Browser Test App",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: [`${app.origin}/cb`],
    });
    config = oidcConfig(peer, client.client_id, oidc.ClientSecretBasic(client.client_secret));
    browser = await launchChromium();
    context = browser.context;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => app?.server.close(r));
    await peer?.stop();
  });

  it("signs in through the page, then reuses the session without asking again", async () => {
    const page = await context.newPage();
    await page.goto(`${app.origin}/login`);
    expect(new URL(page.url()).pathname).toBe("/api/auth/oauth2/sign-in");
    await expect(page.getByRole("heading", { name: "Sign in" }).isVisible()).resolves.toBe(true);
    expect(await page.textContent("main")).toContain("Browser Test App");

    // A wrong password first: the page says so and keeps the user name.
    await page.getByLabel("User name").fill(user.name);
    await page.getByLabel("Password").fill("Wrong-password-1");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForLoadState();
    expect(await page.getByRole("alert").textContent()).toContain("Wrong user name or password");
    expect(await page.getByLabel("User name").inputValue()).toBe(user.name);

    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${app.origin}/cb?**`);
    expect(await page.textContent("#who")).toBe(`Signed in as ${user.name}`);

    const session = (await context.cookies(`${peer.url}/api/auth/oauth2/authorization`)).find(
      (c) => c.name === "oauth_session",
    );
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/api/auth/oauth2", secure: false });

    // Second visit: the session cookie skips the sign-in page.
    await page.goto(`${app.origin}/login`);
    await page.waitForURL(`${app.origin}/cb?**`);
    expect(await page.textContent("#who")).toBe(`Signed in as ${user.name}`);
    await page.close();
  });

  it("the sign-in page cannot be framed", async () => {
    const page = await context.newPage();
    const signInResponse = page.waitForResponse((r) => r.url().includes("/api/auth/oauth2/sign-in"));
    await page.goto(`${app.origin}/frame`, { waitUntil: "load" });
    // The server did answer the framed request...
    const res = await signInResponse;
    expect(res.status()).toBe(200);
    expect(res.headers()["x-frame-options"]).toBe("DENY");
    // ...but chromium refused to render it inside another origin's page.
    await page.waitForTimeout(300);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    expect(await frame!.$("form").catch(() => null)).toBeNull();
    expect(await frame!.$("#username").catch(() => null)).toBeNull();
    await page.close();
  });
});
