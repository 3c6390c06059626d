// The accounts area: users, passwords, e-mails, API tokens, roles and scopes.
import type { CloudModule } from "../module.js";
import { createMailer, type Mailer } from "../mail/mailer.js";
import { scopeAccess } from "./service/access.js";
import { apiTokenAuthenticator } from "./service/authenticator.js";
import { accountsMigrations } from "./repo/migrations.js";
import { accountsRoutes } from "./routes/index.js";
import { seedAdmin, seedCatalogue } from "./service/seed.js";
import { createAccountsService, type AccountsService } from "./service/accounts-service.js";

declare module "../services.js" {
  interface Services {
    /** Users, passwords, roles and scopes (cloud/accounts/service/accounts-service.ts). */
    accounts: AccountsService;
    /** Outgoing mail (SMTP or <data>/outbox). */
    mailer: Mailer;
  }
}

const TOKEN_USE_FLUSH_MS = 5_000;

export const accountsModule: CloudModule = {
  name: "accounts",
  migrations: accountsMigrations,
  routes: accountsRoutes,
  async init(svc) {
    const times = await seedCatalogue(svc);
    await seedAdmin(svc);
    svc.mailer = createMailer({ smtpUrl: svc.config.smtpUrl, from: svc.config.mailFrom, dataDir: svc.config.dataDir, log: svc.log });
    svc.accounts = createAccountsService(svc, svc.mailer, times);
    svc.authenticators.push(apiTokenAuthenticator(svc.accounts));
    svc.access = scopeAccess;
    const timer = setInterval(() => void svc.accounts.flushTokenUse().catch((err) => svc.log.warn({ err: String(err) }, "token use flush failed")), TOKEN_USE_FLUSH_MS);
    timer.unref();
    svc.onClose.push(async () => {
      clearInterval(timer);
      await svc.accounts.flushTokenUse();
      svc.mailer.close();
    });
  },
};
