// Operations on user-owned OAuth2 clients and their secrets. Secrets are shown once, when created.
import crypto from "node:crypto";
import { Invalid, NotFound } from "../../errors.js";
import { pageInfo } from "../../http/query.js";
import type { Services } from "../../services.js";
import { clientsRepo, type ClientRecord, type SecretRecord } from "../repo/clients.js";
import { generateSecret, hashSecret } from "../service/secrets.js";
import { checkRedirectUris, clientShape } from "./registration.js";
import type { CreateClientRequest } from "../schemas.js";

export const nowIso = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

const secretView = (s: SecretRecord, plain = "") => ({
  id: s.id,
  name: s.name,
  secret: plain,
  last_used_at: s.last_used_at,
  created_at: s.created_at,
});

export function clientView(c: ClientRecord, secrets: SecretRecord[], plain?: { id: number; secret: string }) {
  return {
    client_id: c.client_id,
    name: c.name,
    secrets: secrets.map((s) => secretView(s, plain && s.id === plain.id ? plain.secret : "")),
    grant_types: c.grant_types,
    token_endpoint_auth_method: c.token_endpoint_auth_method,
    redirect_uris: c.redirect_uris,
    response_types: c.response_types,
    scopes: c.scopes,
    audiences: c.audiences,
    tls_client_auth_subject_dn: c.tls_client_auth_subject_dn,
    ...(c.user_uuid ? { user_uuid: c.user_uuid } : {}),
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

/** The client, if it exists and (when `owner` is given) belongs to that user; else 404. */
async function requireClient(svc: Services, clientId: string, owner?: string): Promise<ClientRecord> {
  const c = await clientsRepo.get(svc.db, clientId);
  if (!c || (owner !== undefined && c.user_uuid !== owner)) throw new NotFound("OAuth2 client not found");
  return c;
}

export async function createClient(svc: Services, owner: string, req: CreateClientRequest) {
  const shape = clientShape(req);
  const at = nowIso();
  const record: ClientRecord = {
    client_id: crypto.randomUUID(),
    name: req.name,
    ...shape,
    // Tokens issued to the client never exceed what its owner held when registering it.
    scopes: await svc.accounts.scopesOf(owner),
    audiences: [],
    user_uuid: owner,
    created_at: at,
    updated_at: at,
  };
  const secret = shape.token_endpoint_auth_method === "none" ? undefined : generateSecret();
  const stored = await svc.db.transaction(async (tx) => {
    await clientsRepo.insert(tx, record);
    return secret ? await clientsRepo.addSecret(tx, record.client_id, "default", hashSecret(secret), at) : undefined;
  });
  const view = clientView(record, stored ? [stored] : [], stored && secret ? { id: stored.id, secret } : undefined);
  return secret ? { ...view, client_secret: secret } : view;
}

export async function getClient(svc: Services, clientId: string, owner?: string) {
  await svc.oauth.ownClients.flush();
  const c = await requireClient(svc, clientId, owner);
  return clientView(c, await clientsRepo.secrets(svc.db, clientId));
}

export async function listClients(
  svc: Services,
  f: {
    ids?: readonly string[];
    names?: readonly string[];
    userUuid?: string;
    sort?: string;
    page: number;
    perPage: number;
  },
) {
  await svc.oauth.ownClients.flush();
  const { items, total } = await clientsRepo.list(svc.db, f);
  const secrets = await clientsRepo.secretsOf(
    svc.db,
    items.map((c) => c.client_id),
  );
  return {
    items: items.map((c) =>
      clientView(
        c,
        secrets.filter((s) => s.client_id === c.client_id),
      ),
    ),
    page: pageInfo(total, f.page, f.perPage),
  };
}

export async function updateClient(
  svc: Services,
  clientId: string,
  patch: { name?: string; redirect_uris?: readonly string[] },
  owner?: string,
) {
  const c = await requireClient(svc, clientId, owner);
  let uris: string[] | undefined;
  if (patch.redirect_uris !== undefined) {
    if (c.grant_types.includes("client_credentials") && patch.redirect_uris.length)
      throw new Invalid("a client-credentials client has no redirect URIs", {
        redirect_uris: "must be empty for client_credentials",
      });
    if (c.grant_types.includes("authorization_code") && !patch.redirect_uris.length)
      throw new Invalid("an authorization-code client needs redirect_uris", {
        redirect_uris: "at least one is required",
      });
    uris = checkRedirectUris(patch.redirect_uris);
  }
  await clientsRepo.update(
    svc.db,
    clientId,
    { ...(patch.name !== undefined ? { name: patch.name } : {}), ...(uris ? { redirect_uris: uris } : {}) },
    nowIso(),
  );
  svc.oauth.ownClients.invalidate(clientId);
  return getClient(svc, clientId);
}

export async function deleteClient(svc: Services, clientId: string, owner?: string): Promise<undefined> {
  await requireClient(svc, clientId, owner);
  await clientsRepo.delete(svc.db, clientId);
  svc.oauth.ownClients.invalidate(clientId);
  return undefined;
}

export async function createSecret(svc: Services, clientId: string, name: string, owner?: string) {
  const c = await requireClient(svc, clientId, owner);
  if (c.token_endpoint_auth_method === "none")
    throw new Invalid("a public client (token_endpoint_auth_method none) has no secrets");
  const secret = generateSecret();
  const stored = await clientsRepo.addSecret(svc.db, clientId, name, hashSecret(secret), nowIso());
  svc.oauth.ownClients.invalidate(clientId);
  return secretView(stored, secret);
}

export async function deleteSecret(
  svc: Services,
  clientId: string,
  secretId: number,
  owner?: string,
): Promise<undefined> {
  await requireClient(svc, clientId, owner);
  if (!(await clientsRepo.deleteSecret(svc.db, clientId, secretId))) throw new NotFound("client secret not found");
  svc.oauth.ownClients.invalidate(clientId);
  return undefined;
}
