// API token operations: create (the token is shown once; only its SHA-256 digest is kept),
// list, rename, delete, and introspection.
import { Conflict, Invalid, NotFound } from "../../errors.js";
import { pageInfo } from "../../http/query.js";
import type { Services } from "../../services.js";
import { isUniqueViolation } from "../../database/db.js";
import { resolveScopes } from "./catalogue.js";
import { generateSecret } from "../../oauth/service/secrets.js";
import { digest } from "./password-rules.js";
import { nowIso } from "./accounts-service.js";
import { scopeView, tokenView } from "./views.js";
import { requireUser } from "./account-helpers.js";

const taken = () => new Conflict("an API token with this name exists", { name: "already exist" });
const normaliseTime = (s: string) => new Date(s).toISOString().replace(/\.\d{3}Z$/, "Z");

async function userScopes(svc: Services, userUuid: string) {
  return resolveScopes(await svc.accounts.scopesOf(userUuid));
}

export async function createToken(svc: Services, userUuid: string, body: { name: string; expired_at?: string }) {
  await requireUser(svc, userUuid);
  if (body.expired_at !== undefined && Date.parse(body.expired_at) <= Date.now())
    throw new Invalid("expired_at must be in the future", { expired_at: "must be in the future" });
  const token = generateSecret();
  const now = nowIso();
  let id: number;
  try {
    id = await svc.accounts.tokens.insert({
      user_uuid: userUuid,
      name: body.name,
      digest: digest(token),
      last_used_at: null,
      expired_at: body.expired_at !== undefined ? normaliseTime(body.expired_at) : null,
      created_at: now,
      updated_at: now,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
  const row = (await svc.accounts.tokens.byId(userUuid, id))!;
  return tokenView(row, await userScopes(svc, userUuid), svc.accounts.catalogueTimes, token);
}

export async function listTokens(svc: Services, userUuid: string, page: number, perPage: number) {
  await requireUser(svc, userUuid);
  await svc.accounts.flushTokenUse();
  const { rows, total } = await svc.accounts.tokens.list(userUuid, page, perPage);
  const scopes = await userScopes(svc, userUuid);
  return {
    items: rows.map((r) => tokenView(r, scopes, svc.accounts.catalogueTimes)),
    page: pageInfo(total, page, perPage),
  };
}

export async function renameToken(svc: Services, userUuid: string, id: number, name: string) {
  await requireUser(svc, userUuid);
  const row = await svc.accounts.tokens.byId(userUuid, id);
  if (!row) throw new NotFound("API token not found");
  try {
    if (row.name !== name) await svc.accounts.tokens.rename(userUuid, id, name, nowIso());
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
  await svc.accounts.flushTokenUse();
  return tokenView(
    (await svc.accounts.tokens.byId(userUuid, id))!,
    await userScopes(svc, userUuid),
    svc.accounts.catalogueTimes,
  );
}

export async function deleteToken(svc: Services, userUuid: string, id: number) {
  await requireUser(svc, userUuid);
  if (!(await svc.accounts.tokens.delete(userUuid, id))) throw new NotFound("API token not found");
}

export async function introspect(svc: Services, token: string) {
  const row = await svc.accounts.tokens.byDigest(digest(token));
  if (!row || (row.expired_at && Date.parse(row.expired_at) <= Date.now())) return { active: false };
  const user = await svc.accounts.findUser(row.user_uuid);
  if (!user || user.disabled) return { active: false };
  return {
    active: true,
    tenant_id: user.tenant_uuid,
    user_uuid: user.uuid,
    scopes: (await userScopes(svc, user.uuid)).map((s) => scopeView(s, svc.accounts.catalogueTimes(s.uuid))),
    expired_at: row.expired_at,
    created_at: row.created_at,
  };
}
