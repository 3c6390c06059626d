// Helpers shared by the OAuth tests: tokens by the password grant over plain HTTP, users with a
// known (non-temporary) password, client registration, and openid-client configurations.
import * as oidc from "openid-client";
import type { TestPeer } from "../harness.js";

export const ADMIN_PASSWORD = "Admin-password-1";
export const MEMBER_ROLE = "751d7649-7fff-45ab-aecd-9c890f22061c";

export const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
});

export async function passwordToken(peer: TestPeer, username: string, password: string): Promise<any> {
  const res = await peer.api("/auth/oauth2/token", form({ grant_type: "password", username, password }));
  const body = await res.json();
  if (res.status !== 200) throw new Error(`password grant for ${username}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export async function adminToken(peer: TestPeer): Promise<string> {
  return (await passwordToken(peer, "admin", ADMIN_PASSWORD)).access_token;
}

let seq = 0;
/** A member user whose temporary password was replaced by `password`. */
export async function createUser(
  peer: TestPeer,
  admin: string,
  password = "User-password-1",
): Promise<{ uuid: string; name: string; password: string }> {
  const name = `user${process.pid}x${++seq}`;
  const created = await peer.api("/auth/users", {
    method: "POST",
    headers: bearer(admin),
    json: { name, role_uuids: [MEMBER_ROLE] },
  });
  if (created.status !== 201) throw new Error(`create user: ${created.status} ${await created.text()}`);
  const user: any = await created.json();
  const temp = user.password.temporary_password as string;
  const t = await passwordToken(peer, name, temp);
  const changed = await peer.api("/auth/users/me/password", {
    method: "PUT",
    headers: bearer(t.access_token),
    json: { password, old_password: temp },
  });
  if (changed.status !== 200) throw new Error(`change password: ${changed.status} ${await changed.text()}`);
  return { uuid: user.uuid, name, password };
}

export async function registerClient(peer: TestPeer, token: string, body: Record<string, unknown>): Promise<any> {
  const res = await peer.api("/auth/users/me/clients", { method: "POST", headers: bearer(token), json: body });
  const json = await res.json();
  if (res.status !== 201) throw new Error(`register client: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

export function serverMetadata(peer: TestPeer): oidc.ServerMetadata {
  return {
    issuer: peer.url,
    token_endpoint: `${peer.url}/api/auth/oauth2/token`,
    authorization_endpoint: `${peer.url}/api/auth/oauth2/authorization`,
    revocation_endpoint: `${peer.url}/api/auth/oauth2/revocation`,
    jwks_uri: `${peer.url}/api/auth/oauth2/jwks`,
    authorization_response_iss_parameter_supported: true,
  };
}

/** An openid-client configuration for our peer over plain HTTP (loopback). */
export function oidcConfig(
  peer: TestPeer,
  clientId: string,
  auth: oidc.ClientAuth,
  metadata: Partial<oidc.ClientMetadata> = {},
): oidc.Configuration {
  const config = new oidc.Configuration(serverMetadata(peer), clientId, metadata, auth);
  oidc.allowInsecureRequests(config);
  return config;
}

export const decodeJwt = (jwt: string) => ({
  header: JSON.parse(Buffer.from(jwt.split(".")[0]!, "base64url").toString()),
  claims: JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()),
});
