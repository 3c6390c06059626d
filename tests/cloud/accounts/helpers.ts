// Helpers for the accounts tests: an admin API token and JSON calls with a token.
import { expect } from "vitest";
import { createToken } from "../../../cloud/accounts/service/tokens.js";
import { startTestPeer, type TestPeer } from "../harness.js";

export type Call = (
  path: string,
  init?: RequestInit & { json?: unknown },
) => Promise<{ status: number; body: any; headers: Headers }>;

export async function adminToken(peer: TestPeer, name = "tests"): Promise<string> {
  const admin = (await peer.svc.accounts.findUserByName("admin"))!;
  return (await createToken(peer.svc, admin.uuid, { name })).token!;
}

/** A cloud peer on a temp dir with an admin API token, a caller holding it, and the admin's uuid. */
export async function startPeerWithAdmin(): Promise<{ peer: TestPeer; token: string; admin: Call; adminUuid: string }> {
  const peer = await startTestPeer();
  try {
    const token = await adminToken(peer);
    const adminUuid = (await peer.svc.accounts.findUserByName("admin"))!.uuid;
    return { peer, token, admin: caller(peer, token), adminUuid };
  } catch (e) {
    await peer.stop();
    throw e;
  }
}

export function caller(peer: TestPeer, token?: string, header = "X-Intdash-Token"): Call {
  return async (path, init = {}) => {
    const headers = new Headers(init.headers);
    if (token) headers.set(header, token);
    const res = await peer.api(path, { ...init, headers });
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body, headers: res.headers };
  };
}

/** A caller holding an access token from the password grant (a credential obtained with the password). */
export async function passwordGrantCaller(peer: TestPeer, username: string, password: string): Promise<Call> {
  const res = await peer.api("/auth/oauth2/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "password", username, password }).toString(),
  });
  const body: any = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return caller(peer, `Bearer ${body.access_token}`, "Authorization");
}

/** Creates a user through the API and returns it (with its temporary password). */
export async function createUser(call: Call, name: string, extra: Record<string, unknown> = {}) {
  const r = await call("/auth/users", { method: "POST", json: { name, role_uuids: [MEMBER], ...extra } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

/** Makes a user's password permanent and returns an API token of that user. */
export async function tokenOf(
  peer: TestPeer,
  call: Call,
  user: { uuid: string; password: { temporary_password: string } },
  password = "Good-pass-123",
) {
  const tok = await call(`/auth/users/${user.uuid}/tokens`, {
    method: "POST",
    json: { name: "t" + Date.now() + Math.random() },
  });
  expect(tok.status).toBe(201);
  const own = caller(peer, tok.body.token);
  const ch = await own("/auth/users/me/password", {
    method: "PUT",
    json: { password, old_password: user.password.temporary_password },
  });
  expect(ch.status, JSON.stringify(ch.body)).toBe(200);
  return tok.body.token as string;
}

export const MEMBER = "751d7649-7fff-45ab-aecd-9c890f22061c";
export const SUPER = "afb7f751-cf2c-4ce6-a9b4-c5820217df87";
export const READ_ONLY = "09a57d93-7cb0-4a2d-bc5e-74b0eb04997b";
export const OWNER = "bd8058f4-a370-49a4-9e8a-8326a07872b7";
export const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function expectError(r: { status: number; body: any; headers: Headers }, status: number, type?: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(typeof r.body.title).toBe("string");
  if (type) expect(r.body.type).toBe(type);
}
