// Client authentication methods beyond shared secrets, and the pluggable client registry that the
// organisation area uses for edges (client_id = edge UUID, subject = the edge).
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import https from "node:https";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OAuthClient } from "../../../cloud/oauth/clients/model.js";
import { generateSecret, hashSecret, verifySecret } from "../../../cloud/oauth/service/secrets.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  adminToken,
  bearer,
  createUser,
  decodeJwt,
  form,
  oidcConfig,
  passwordToken,
  registerClient,
} from "./helpers.js";

function makeKeyAndCertificate(dir: string, subject: string, days = 1): { key: string; cert: string } {
  const key = path.join(dir, `${crypto.randomUUID()}.key`);
  const cert = path.join(dir, `${crypto.randomUUID()}.pem`);
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-subj",
      subject,
      "-days",
      String(days),
      "-keyout",
      key,
      "-out",
      cert,
    ],
    { stdio: "ignore" },
  );
  return { key: fs.readFileSync(key, "utf8"), cert: fs.readFileSync(cert, "utf8") };
}
const makeCertificate = (dir: string, subject: string) => makeKeyAndCertificate(dir, subject).cert;

/** POSTs a form over TLS presenting a client certificate. */
function postWithClientCert(
  port: number,
  ca: string,
  client: { key: string; cert: string } | undefined,
  body: string,
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/api/auth/oauth2/token",
        ca,
        ...(client ? { key: client.key, cert: client.cert } : {}),
        servername: "localhost",
        checkServerIdentity: () => undefined,
        headers: { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("client authentication", () => {
  let peer: TestPeer;
  let token: string;
  let dir: string;
  beforeAll(async () => {
    peer = await startTestPeer();
    const admin = await adminToken(peer);
    const user = await createUser(peer, admin);
    token = (await passwordToken(peer, user.name, user.password)).access_token;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "oauth-certs-"));
  });
  afterAll(async () => {
    await peer.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("tls_client_auth: the certificate in client_certification must carry the registered subject DN", async () => {
    const c = await registerClient(peer, token, {
      name: "mtls",
      grant_type: "client_credentials",
      token_endpoint_auth_method: "tls_client_auth",
      tls_client_auth_subject_dn: "CN=edge-1,O=Example,C=JP",
    });
    const good = makeCertificate(dir, "/C=JP/O=Example/CN=edge-1");
    const other = makeCertificate(dir, "/C=JP/O=Example/CN=edge-2");
    const ok = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "client_credentials", client_id: c.client_id, client_certification: good }),
    );
    expect(ok.status).toBe(200);
    expect(decodeJwt(((await ok.json()) as any).access_token).claims.client_id).toBe(c.client_id);
    // Base64 DER without PEM armour works too.
    const der = good.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, "");
    expect(
      (
        await peer.api(
          "/auth/oauth2/token",
          form({ grant_type: "client_credentials", client_id: c.client_id, client_certification: der }),
        )
      ).status,
    ).toBe(200);
    for (const cert of [other, "garbage", undefined]) {
      const res = await peer.api(
        "/auth/oauth2/token",
        form({
          grant_type: "client_credentials",
          client_id: c.client_id,
          ...(cert ? { client_certification: cert } : {}),
        }),
      );
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "invalid_client" });
    }
    // A '+' of the certificate sent unencoded arrives as a space: still understood.
    const sloppy = `grant_type=client_credentials&client_id=${c.client_id}&client_certification=${good.replace(/\n/g, "%0A")}`;
    expect(
      (
        await peer.api("/auth/oauth2/token", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: sloppy,
        })
      ).status,
    ).toBe(200);
    // The same certificate authenticates the client at the revocation endpoint.
    const t: any = await (
      await peer.api(
        "/auth/oauth2/token",
        form({ grant_type: "client_credentials", client_id: c.client_id, client_certification: good }),
      )
    ).json();
    const revoked = await peer.api(
      "/auth/oauth2/revocation",
      form({
        client_id: c.client_id,
        client_certification: good,
        token: t.access_token,
        token_type_hint: "access_token",
      }),
    );
    expect(revoked.status).toBe(200);
    expect((await peer.api("/auth/users/me", { headers: bearer(t.access_token) })).status).toBe(401);
    const wrongCert = await peer.api(
      "/auth/oauth2/revocation",
      form({ client_id: c.client_id, client_certification: other, token: "x" }),
    );
    expect(wrongCert.status).toBe(401);
    // The initial secret does not replace the certificate.
    const bySecret = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "client_credentials", client_id: c.client_id, client_secret: c.client_secret }),
    );
    expect(bySecret.status).toBe(401);
  });

  it("tls_client_auth over a TLS connection with a verified client certificate (no form field)", async () => {
    const serverPair = makeKeyAndCertificate(dir, "/CN=localhost");
    const trusted = makeKeyAndCertificate(dir, "/C=JP/O=Example/CN=tls-edge");
    const untrusted = makeKeyAndCertificate(dir, "/C=JP/O=Example/CN=tls-edge");
    // The same request listener (fast path + Koa) behind a TLS server that asks for client certificates.
    const app = peer.server.listeners("request")[0] as http.RequestListener;
    const tls = https.createServer(
      { key: serverPair.key, cert: serverPair.cert, ca: [trusted.cert], requestCert: true, rejectUnauthorized: false },
      app,
    );
    await new Promise<void>((r) => tls.listen(0, "127.0.0.1", r));
    try {
      const port = (tls.address() as { port: number }).port;
      const c = await registerClient(peer, token, {
        name: "mtls-socket",
        grant_type: "client_credentials",
        token_endpoint_auth_method: "tls_client_auth",
        tls_client_auth_subject_dn: "CN=tls-edge, O=Example, C=JP",
      });
      const body = `grant_type=client_credentials&client_id=${c.client_id}`;
      const ok = await postWithClientCert(port, serverPair.cert, trusted, body);
      expect(ok.status).toBe(200);
      expect(decodeJwt(ok.json.access_token).claims.client_id).toBe(c.client_id);
      // Same subject, but not signed by a trusted CA: the socket is not authorized.
      const bad = await postWithClientCert(port, serverPair.cert, untrusted, body);
      expect(bad.status).toBe(401);
      expect(bad.json.error).toBe("invalid_client");
      // On a TLS connection only the verified certificate counts: a (public) certificate pasted into
      // client_certification proves nothing, with an unverified certificate or with none at all.
      const pasted = `${body}&client_certification=${encodeURIComponent(trusted.cert)}`;
      const forged = await postWithClientCert(port, serverPair.cert, untrusted, pasted);
      expect(forged.status).toBe(401);
      expect(forged.json.error).toBe("invalid_client");
      const noCert = await postWithClientCert(port, serverPair.cert, undefined, pasted);
      expect(noCert.status).toBe(401);
    } finally {
      await new Promise((r) => {
        tls.close(r);
        tls.closeAllConnections();
      });
    }
  });

  it("refuses a public client at the client_credentials grant and a secret from a public client", async () => {
    const pub = await registerClient(peer, token, {
      name: "p",
      grant_type: "authorization_code",
      token_endpoint_auth_method: "none",
      redirect_uris: ["https://p.example/cb"],
    });
    const cc = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "client_credentials", client_id: pub.client_id }),
    );
    expect(await cc.json()).toMatchObject({ error: "unauthorized_client" });
    const withSecret = await peer.api(
      "/auth/oauth2/token",
      form({ grant_type: "refresh_token", client_id: pub.client_id, client_secret: "x", refresh_token: "y" }),
    );
    expect(withSecret.status).toBe(401);
  });

  it("refuses two authentication methods at once and a client_id differing from the Basic user", async () => {
    const c = await registerClient(peer, token, {
      name: "b",
      grant_type: "client_credentials",
      token_endpoint_auth_method: "client_secret_basic",
    });
    const basic = `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString("base64")}`;
    const both = await peer.api("/auth/oauth2/token", {
      ...form({ grant_type: "client_credentials", client_secret: c.client_secret }),
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
    });
    expect(await both.json()).toMatchObject({ error: "invalid_request" });
    const differing = await peer.api("/auth/oauth2/token", {
      ...form({ grant_type: "client_credentials", client_id: "someone-else" }),
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
    });
    expect(await differing.json()).toMatchObject({ error: "invalid_request" });
  });

  it("resolves clients through pluggable resolvers: an edge gets a token whose subject is the edge", async () => {
    const edgeUuid = crypto.randomUUID();
    const secret = generateSecret();
    const digest = hashSecret(secret);
    const edge: OAuthClient = {
      clientId: edgeUuid,
      kind: "edge",
      grantTypes: ["client_credentials"],
      tokenEndpointAuthMethod: "client_secret_post",
      redirectUris: [],
      tlsClientAuthSubjectDn: "",
      credentials: async () => ({
        subject: { kind: "edge", uuid: edgeUuid },
        scopes: ["edge-self:r", "measurements:w"],
      }),
      verifySecret: (s) => verifySecret(s, digest),
    };
    peer.svc.oauth.clientResolvers.push(async (id) => (id === edgeUuid ? edge : undefined));
    const tokens = await oidc.clientCredentialsGrant(oidcConfig(peer, edgeUuid, oidc.ClientSecretPost(secret)));
    expect(tokens.scope).toBe("edge-self:r measurements:w");
    expect(decodeJwt(tokens.access_token).claims).toMatchObject({
      sub: edgeUuid,
      sub_kind: "edge",
      client_id: edgeUuid,
    });
    // The resource server sees an edge: it has no own user.
    const me = await peer.api("/auth/users/me", { headers: bearer(tokens.access_token) });
    expect(me.status).toBe(403);
    // A narrower scope may be asked for; a wider one is refused.
    const narrow = await oidc.clientCredentialsGrant(oidcConfig(peer, edgeUuid, oidc.ClientSecretPost(secret)), {
      scope: "measurements:w",
    });
    expect(narrow.scope).toBe("measurements:w");
    await expect(
      oidc.clientCredentialsGrant(oidcConfig(peer, edgeUuid, oidc.ClientSecretPost(secret)), { scope: "all:a" }),
    ).rejects.toMatchObject({ error: "invalid_scope" });
    await expect(
      oidc.clientCredentialsGrant(oidcConfig(peer, edgeUuid, oidc.ClientSecretPost("wrong"))),
    ).rejects.toMatchObject({ error: "invalid_client" });
  });
});
