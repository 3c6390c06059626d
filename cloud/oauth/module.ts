// The OAuth 2.0 authorization server: token, authorization + sign-in page, revocation, JWKS,
// OAuth2 client registration, and the bearer-token authenticator of the resource server.
import type { CloudModule } from "../module.js";
import { accountsAdapter } from "./service/accounts-adapter.js";
import { installTokenFastPath } from "./routes/token-fast-path.js";
import { oauthRoutes } from "./routes/index.js";
import { bearerAuthenticator } from "./service/bearer.js";
import { OwnClients } from "./clients/own-clients.js";
import { oauthMigrations } from "./repo/migrations.js";
import { grantsRepo } from "./repo/grants.js";
import { createOAuthService } from "./service/oauth-service.js";
import { Denylist } from "./tokens/denylist.js";
import { TokenIssuer } from "./tokens/issue.js";
import { KeyStore } from "./tokens/keystore.js";

const PURGE_MS = 10 * 60_000;

export const oauthModule: CloudModule = {
  name: "oauth",
  migrations: oauthMigrations,
  routes: oauthRoutes,
  async init(svc) {
    const warn = (what: string) => (err: unknown) => svc.log.warn({ err: String(err) }, what);
    const keys = await KeyStore.open(svc.db, () => svc.config.accessTokenTtl);
    const denylist = new Denylist(svc.db);
    await denylist.load();
    const ownClients = new OwnClients(svc.db);
    const issuer = new TokenIssuer(svc.db, keys, denylist, {
      issuer: () => svc.config.publicUrl,
      accessTtl: () => svc.config.accessTokenTtl,
      refreshTtl: () => svc.config.refreshTokenTtl,
    });
    svc.oauth = createOAuthService(svc, { keys, denylist, issuer, ownClients, accounts: accountsAdapter(svc) });
    svc.authenticators.push(bearerAuthenticator(svc));
    keys.startReloading(warn("signing key reload failed"));
    denylist.start(warn("denylist poll failed"));
    ownClients.start(warn("client secret use flush failed"));
    const purge = setInterval(() => grantsRepo.purgeExpired(svc.db, Math.floor(Date.now() / 1000)).catch(warn("purge failed")), PURGE_MS);
    purge.unref();
    svc.onClose.push(async () => {
      clearInterval(purge);
      keys.stop();
      denylist.stop();
      await ownClients.stop();
    });
  },
  attach(server, svc) {
    installTokenFastPath(server, svc);
  },
};
