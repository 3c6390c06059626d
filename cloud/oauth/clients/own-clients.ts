// Resolver for user-owned OAuth2 clients. Clients and secret digests are cached briefly so the token
// endpoint does not read the database per request; secret use times are written in batches.
import type { Db } from "../../database/db.js";
import { clientsRepo, type ClientRecord, type SecretRecord } from "../repo/clients.js";
import { verifySecret } from "../service/secrets.js";
import type { ClientResolver, OAuthClient } from "./model.js";

const CACHE_MS = 5_000;
const FLUSH_MS = 1_000;

interface Entry {
  at: number;
  client: ClientRecord | undefined;
  secrets: SecretRecord[];
}

export class OwnClients {
  private readonly cache = new Map<string, Entry>();
  private readonly used = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;

  /** `onInvalidated` tells the other peers (cluster notice) to drop their copy too. */
  constructor(
    private readonly db: Db,
    private readonly onInvalidated: (clientId: string) => void = () => {},
  ) {}

  /** Drops a cached client after it or its secrets changed, here and on the other peers. */
  invalidate(clientId: string): void {
    this.forget(clientId);
    this.onInvalidated(clientId);
  }

  /** Drops a cached client here only (another peer changed it). */
  forget(clientId: string): void {
    this.cache.delete(clientId);
  }

  private async load(clientId: string): Promise<Entry> {
    const hit = this.cache.get(clientId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit;
    const client = await clientsRepo.get(this.db, clientId);
    const entry = { at: Date.now(), client, secrets: client ? await clientsRepo.secrets(this.db, clientId) : [] };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(clientId, entry);
    return entry;
  }

  readonly resolve: ClientResolver = async (clientId) => {
    if (clientId.length > 256) return undefined;
    const { client, secrets } = await this.load(clientId);
    if (!client) return undefined;
    return this.toOAuthClient(client, secrets);
  };

  private toOAuthClient(c: ClientRecord, secrets: SecretRecord[]): OAuthClient {
    const owner = c.user_uuid;
    return {
      clientId: c.client_id,
      kind: "client",
      grantTypes: c.grant_types,
      tokenEndpointAuthMethod: c.token_endpoint_auth_method,
      redirectUris: c.redirect_uris,
      tlsClientAuthSubjectDn: c.tls_client_auth_subject_dn,
      scopeCap: c.scopes,
      // A client-credentials client acts for its owner, with the scopes it was registered with.
      credentials: async () =>
        owner ? { subject: { kind: "user" as const, uuid: owner }, scopes: c.scopes } : undefined,
      verifySecret: (secret) => {
        // Check every digest (no early exit) so timing does not reveal which one matched.
        let match: SecretRecord | undefined;
        for (const s of secrets) if (verifySecret(secret, s.digest) && !match) match = s;
        if (match) this.markUsed(match.id);
        return match !== undefined;
      },
    };
  }

  private markUsed(id: number): void {
    this.used.set(id, Date.now());
  }

  async flush(): Promise<void> {
    if (!this.used.size) return;
    const uses = [...this.used].map(([id, at]) => ({ id, at: new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z") }));
    this.used.clear();
    await this.db.transaction((tx) => clientsRepo.touchSecrets(tx, uses));
  }

  start(onError: (err: unknown) => void): void {
    this.timer = setInterval(() => this.flush().catch(onError), FLUSH_MS);
    this.timer.unref();
  }
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
