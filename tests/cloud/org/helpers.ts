// Helpers for the organisation tests: users with API tokens, edges with bearer tokens.
import { expect } from "vitest";
import { adminToken, caller, createUser, tokenOf, type Call } from "../accounts/helpers.js";
import type { TestPeer } from "../harness.js";

export { adminToken, caller, type Call };
export { MEMBER, OWNER, READ_ONLY, SUPER, TS, UUID } from "../accounts/helpers.js";

export interface TestUser {
  uuid: string;
  name: string;
  token: string;
  call: Call;
}

/** A user with the given global roles (default: member) and an API token. */
export async function makeUser(peer: TestPeer, admin: Call, name: string, roles?: string[]): Promise<TestUser> {
  const u = await createUser(admin, name, { ...(roles ? { role_uuids: roles } : {}), email: `${name}@example.test` });
  const token = await tokenOf(peer, admin, u);
  return { uuid: u.uuid, name, token, call: caller(peer, token) };
}

export interface TestEdge {
  uuid: string;
  name: string;
  secret: string;
}

export async function makeEdge(call: Call, name: string, path = "/auth/edges"): Promise<TestEdge> {
  const r = await call(path, { method: "POST", json: { name } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { uuid: r.body.uuid, name, secret: r.body.client_secret };
}

/** client_credentials at the token endpoint with the edge UUID and a secret. */
export async function edgeToken(
  peer: TestPeer,
  edge: { uuid: string; secret: string },
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${peer.url}/api/auth/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: edge.uuid, client_secret: edge.secret }),
  });
  return { status: res.status, body: await res.json() };
}

export function bearer(peer: TestPeer, token: string): Call {
  return caller(peer, `Bearer ${token}`, "Authorization");
}

export async function json(r: Promise<{ status: number; body: any }>, status: number) {
  const res = await r;
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body;
}
