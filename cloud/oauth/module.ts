// The OAuth 2.0 authorization server: token, authorization + sign-in page, revocation, JWKS,
// OAuth2 client registration, and the bearer-token authenticator of the resource server.
import type { ProvidingModule } from "../module-contract.js";
import type { Services } from "../services.js";
import { accountsAdapter } from "./service/accounts-adapter.js";
import { metadataFastPath, openIdFastPath, tokenFastPath } from "./routes/token-fast-path.js";
import { oauthRoutes } from "./routes/index.js";
import { bearerAuthenticator } from "./service/bearer.js";
import { oauthErrorRenderer } from "./service/error-renderer.js";
import { OwnClients } from "./clients/own-clients.js";
import { oauthMigrations } from "./repo/migrations.js";
import { grantsRepo } from "./repo/grants.js";
import { createOAuthService } from "./service/oauth-service.js";
import { Denylist } from "./tokens/denylist.js";
import { TokenIssuer } from "./tokens/issue.js";
import { KeyStore } from "./tokens/keystore.js";
import { notify, onNotice } from "../cluster/service/notices.js";
import { limiterOf } from "./routes/sign-in.js";

const PURGE_MS = 10 * 60_000;

type Needs = Pick<Services, "config" | "log" | "db" | "onClose" | "cluster" | "accounts">;

export const oauthModule: ProvidingModule<Needs, Pick<Services, "oauth">> = {
  name: "oauth",
  migrations: oauthMigrations,
  routes: oauthRoutes,
  fastPaths: [tokenFastPath, metadataFastPath, openIdFastPath],
  errorRenderers: [oauthErrorRenderer],
  async provide(svc) {
    const warn = (what: string) => (err: unknown) => svc.log.warn({ err: String(err) }, what);
    const bus = svc.cluster.bus;
    const keys = await KeyStore.open(
      svc.db,
      () => svc.config.accessTokenTtl,
      () => notify(bus, "keys"),
    );
    const denylist = new Denylist(svc.db, (entries) => notify(bus, "revoked", { entries }));
    await denylist.load();
    const ownClients = new OwnClients(svc.db, (clientId) => notify(bus, "client", { clientId }));
    // What another peer changed: its notices drop or fill our caches at once (the polls stay as a fallback).
    onNotice<{ entries: Array<{ jti: string; expiresAt: number }> }>(
      bus,
      "revoked",
      (p) => denylist.remember(Array.isArray(p.entries) ? p.entries : []),
      () => void denylist.poll().catch(warn("denylist poll failed")),
    );
    onNotice(bus, "keys", () => void keys.reload().catch(warn("signing key reload failed")));
    onNotice<{ clientId: string }>(
      bus,
      "client",
      (p) => typeof p.clientId === "string" && ownClients.forget(p.clientId),
      () => {},
    );
    const issuer = new TokenIssuer(svc.db, keys, denylist, {
      issuer: () => svc.config.publicUrl,
      accessTtl: () => svc.config.accessTokenTtl,
      refreshTtl: () => svc.config.refreshTokenTtl,
    });
    const oauth = createOAuthService(svc, { keys, denylist, issuer, ownClients, accounts: accountsAdapter(svc) });
    limiterOf(svc);
    keys.startReloading(warn("signing key reload failed"));
    denylist.start(warn("denylist poll failed"));
    ownClients.start(warn("client secret use flush failed"));
    const purge = setInterval(
      () => grantsRepo.purgeExpired(svc.db, Math.floor(Date.now() / 1000)).catch(warn("purge failed")),
      PURGE_MS,
    );
    purge.unref();
    svc.onClose.push(async () => {
      clearInterval(purge);
      keys.stop();
      denylist.stop();
      await ownClients.stop();
    });
    return { oauth };
  },
  authenticators: (svc) => [bearerAuthenticator(svc)],
};
