// API shapes of accounts resources (the intdash REST API's auth models), built from repository rows.
import type { RoleDef, ScopeDef } from "./scopes.js";
import { resolveScopes } from "./catalogue.js";
import type { ApiTokenRow } from "../repo/tokens.js";
import type { EmailRow, VerificationRow } from "../repo/emails.js";
import type { PasswordRow, UserRow } from "../repo/users.js";

export interface Timestamps {
  created_at: string;
  updated_at: string;
}

export const emailView = (e: EmailRow) => ({
  id: e.id,
  address: e.address,
  verified: e.verified === 1,
  created_at: e.created_at,
  updated_at: e.updated_at,
});

export const verificationView = (v: VerificationRow) => ({
  email_id: v.email_id,
  expired_at: v.expired_at,
  created_at: v.created_at,
  updated_at: v.updated_at,
});

export function passwordView(p: PasswordRow, temporaryPassword?: string) {
  return {
    attempt_count: p.attempt_count,
    is_temporary: p.is_temporary === 1,
    ...(temporaryPassword ? { temporary_password: temporaryPassword } : {}),
    last_attempt_at: p.last_attempt_at,
    ...(p.expired_at ? { expired_at: p.expired_at } : {}),
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}

export function userView(
  u: UserRow,
  p: PasswordRow,
  emails: EmailRow[],
  roles: string[],
  isSuper: boolean,
  temporaryPassword?: string,
) {
  return {
    uuid: u.uuid,
    name: u.name,
    nickname: u.nickname,
    description: u.description,
    disabled: u.disabled === 1,
    is_super: isSuper,
    emails: emails.map(emailView),
    password: passwordView(p, temporaryPassword),
    roles,
    last_sign_in_at: u.last_sign_in_at,
    created_at: u.created_at,
    updated_at: u.updated_at,
  };
}

export function scopeView(s: ScopeDef, ts?: Timestamps) {
  return {
    uuid: s.uuid,
    name: s.name,
    allowed_endpoints: s.allowed_endpoints.map((e) => ({ path: e.path, method: e.method })),
    allowed_iscp_messages: s.allowed_iscp_messages.map((m) => ({ type: m.type })),
    denied_endpoints: s.denied_endpoints.map((e) => ({ path: e.path, method: e.method })),
    ...(ts ? { created_at: ts.created_at, updated_at: ts.updated_at } : {}),
  };
}

export function roleView(r: RoleDef, times: (uuid: string) => Timestamps) {
  return {
    uuid: r.uuid,
    name: r.name,
    scopes: resolveScopes(r.scopeNames).map((s) => scopeView(s, times(s.uuid))),
    ...times(r.uuid),
  };
}

/** `token` only in the response that creates it; scopes without timestamps there (spec). */
export function tokenView(t: ApiTokenRow, scopes: ScopeDef[], times: (uuid: string) => Timestamps, token?: string) {
  return {
    id: t.id,
    name: t.name,
    ...(token ? { token } : {}),
    scopes: scopes.map((s) => scopeView(s, token ? undefined : times(s.uuid))),
    last_used_at: t.last_used_at,
    expired_at: t.expired_at,
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}
