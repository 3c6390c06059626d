// The accounts area: users, passwords, e-mails, API tokens, roles and scopes.
import type { ProvidingModule } from "../module-contract.js";
import type { CoreServices, Services } from "../services.js";
import { createMailer, type Mailer } from "../mail/mailer.js";
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

export const accountsModule: ProvidingModule<
  CoreServices & Pick<Services, "cluster">,
  Pick<Services, "accounts" | "mailer">
> = {
  name: "accounts",
  migrations: accountsMigrations,
  routes: accountsRoutes,
  async provide(svc) {
    const times = await seedCatalogue(svc);
    await seedAdmin(svc);
    const mailer = createMailer({
      smtpUrl: svc.config.smtpUrl,
      from: svc.config.mailFrom,
      dataDir: svc.config.dataDir,
      log: svc.log,
    });
    const accounts = createAccountsService(svc, mailer, times);
    const timer = setInterval(
      () => void accounts.flushTokenUse().catch((err) => svc.log.warn({ err: String(err) }, "token use flush failed")),
      TOKEN_USE_FLUSH_MS,
    );
    timer.unref();
    svc.onClose.push(async () => {
      clearInterval(timer);
      await accounts.flushTokenUse();
      mailer.close();
    });
    return { accounts, mailer };
  },
  authenticators: (svc) => [apiTokenAuthenticator(svc.accounts)],
};
