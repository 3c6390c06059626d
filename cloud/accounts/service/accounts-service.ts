// svc.accounts: what other areas (OAuth2, organisation, iSCP) need from accounts — users by
// uuid/name, password sign-in with back-off, password state, roles and scopes of a user, and a
// Principal for a user. Route handlers use the same object.
import type { Principal } from "../../auth/principal.js";
import type { Services } from "../../services.js";
import type { Mailer } from "../../mail/mailer.js";
import { notify, onNotice } from "../../cluster/service/notices.js";
import { ROLE_UUIDS, scopeNamesOfRoles } from "./catalogue.js";
import { dummyPasswordHash, verifyPassword } from "./password-rules.js";
import { ApiTokensRepo } from "../repo/tokens.js";
import { CatalogueRepo } from "../repo/catalogue.js";
import { EmailsRepo } from "../repo/emails.js";
import { UsersRepo, type PasswordRow, type UserRow } from "../repo/users.js";
import { userView, type Timestamps } from "./views.js";
import { SignInBackOff } from "./sign-in-backoff.js";

export const TENANT_UUID = "00000000-0000-0000-0000-000000000000";

export type SignInResult =
  | { ok: true; user: UserRow; password: PasswordRow }
  | { ok: false; reason: "invalid" | "disabled" }
  | { ok: false; reason: "throttled"; retryAfterMs: number };

export interface PasswordState {
  isTemporary: boolean;
  expired: boolean;
  attemptCount: number;
}

export interface AccountsService {
  readonly tenantUuid: string;
  readonly users: UsersRepo;
  readonly emails: EmailsRepo;
  readonly tokens: ApiTokensRepo;
  readonly catalogue: CatalogueRepo;
  readonly mailer: Mailer;
  findUser(uuid: string): Promise<UserRow | undefined>;
  findUserByName(name: string): Promise<UserRow | undefined>;
  /** True when the password matches (scrypt, timing-safe); does not count attempts. */
  verifyPassword(userUuid: string, password: string): Promise<boolean>;
  /** Counts a failed sign-in into the user's attempt count (shown by the API; the back-off is signInBackOff's). */
  recordFailedSignIn(userUuid: string): Promise<{ attemptCount: number }>;
  /** Clears the failure count and sets last_sign_in_at. */
  recordSuccessfulSignIn(userUuid: string): Promise<void>;
  passwordState(userUuid: string): Promise<PasswordState | undefined>;
  /**
   * Name + password sign-in (password grant, sign-in page) through the back-off: `throttled` while the name or the
   * client address `from` must wait, before the password is checked.
   */
  signIn(name: string, password: string, from?: string): Promise<SignInResult>;
  /** Failures per user name and client address (cleared for a user by unlockPassword). */
  readonly signInBackOff: SignInBackOff;
  roleUuidsOf(userUuid: string): Promise<string[]>;
  /** Scope names the user holds through its roles. */
  scopesOf(userUuid: string): Promise<string[]>;
  isSuper(userUuid: string): Promise<boolean>;
  /** The Principal of an enabled user (undefined when missing or disabled). */
  principalForUser(userUuid: string, via: Principal["via"], extra?: Partial<Principal>): Promise<Principal | undefined>;
  /** Full User resource as the API shows it. */
  userResource(userUuid: string, temporaryPassword?: string): Promise<ReturnType<typeof userView> | undefined>;
  /** created_at/updated_at of a catalogue role or scope. */
  catalogueTimes(uuid: string): Timestamps;
  /** Subscribes to the userDeleted domain event (cloud/events.ts); modules use their `on.userDeleted` instead. */
  onUserDeleted(fn: (userUuid: string) => Promise<void> | void): void;
  /** Emits the userDeleted domain event (called by deleteUser). */
  userDeleted(userUuid: string): Promise<void>;
  /** Remembers an API token use; written to the database in batches. */
  noteTokenUse(tokenId: number): void;
  flushTokenUse(): Promise<void>;
}

export const nowIso = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

export function createAccountsService(
  svc: Pick<Services, "db" | "config" | "log" | "events" | "cluster">,
  mailer: Mailer,
  times: Map<string, Timestamps>,
): AccountsService {
  const users = new UsersRepo(svc.db);
  const emails = new EmailsRepo(svc.db);
  const tokens = new ApiTokensRepo(svc.db);
  const catalogue = new CatalogueRepo(svc.db);
  const pendingUse = new Map<number, string>();
  const epoch = { created_at: "1970-01-01T00:00:00Z", updated_at: "1970-01-01T00:00:00Z" };

  const state = (p: PasswordRow): PasswordState => ({
    isTemporary: p.is_temporary === 1,
    expired: p.expired_at !== null && Date.parse(p.expired_at) <= Date.now(),
    attemptCount: p.attempt_count,
  });

  const quietMs = svc.config.signInQuietSeconds * 1000;
  const maxWaitMs = svc.config.signInMaxWaitSeconds * 1000;
  const firstWaitMs = Math.min(maxWaitMs, svc.config.signInWaitSeconds * 1000);
  const signInBackOff = new SignInBackOff(
    {
      name: { freeFailures: svc.config.lockoutThreshold, firstWaitMs, maxWaitMs, quietMs },
      address: { freeFailures: svc.config.signInAddressFailures, firstWaitMs, maxWaitMs, quietMs },
    },
    (event) => notify(svc.cluster.bus, "signInBackOff", event),
  );
  onNotice<{ of: string; key: string; cleared: true }>(
    svc.cluster.bus,
    "signInBackOff",
    (event) => signInBackOff.heard(event),
    () => {},
  );

  const service: AccountsService = {
    signInBackOff,
    tenantUuid: TENANT_UUID,
    users,
    emails,
    tokens,
    catalogue,
    mailer,
    findUser: (uuid) => users.byUuid(uuid),
    findUserByName: (name) => users.byName(name),
    async verifyPassword(userUuid, password) {
      const p = await users.password(userUuid);
      if (!p) {
        await verifyPassword(password, await dummyPasswordHash());
        return false;
      }
      return verifyPassword(password, p.hash);
    },
    async recordFailedSignIn(userUuid) {
      return { attemptCount: await users.recordFailure(userUuid, nowIso()) };
    },
    async recordSuccessfulSignIn(userUuid) {
      const now = nowIso();
      await users.recordSuccess(userUuid, now);
      await users.setLastSignIn(userUuid, now);
    },
    async passwordState(userUuid) {
      const p = await users.password(userUuid);
      return p && state(p);
    },
    async signIn(name, password, from) {
      const retryAfterMs = signInBackOff.waitMs(name, from);
      if (retryAfterMs > 0) return { ok: false, reason: "throttled", retryAfterMs };
      const user = await users.byName(name);
      const p = user && (await users.password(user.uuid));
      if (!user || !p) {
        await verifyPassword(password, await dummyPasswordHash());
        signInBackOff.failed(name, from);
        return { ok: false, reason: "invalid" };
      }
      if (!(await verifyPassword(password, p.hash))) {
        signInBackOff.failed(name, from);
        await service.recordFailedSignIn(user.uuid);
        return { ok: false, reason: "invalid" };
      }
      if (user.disabled) return { ok: false, reason: "disabled" };
      signInBackOff.succeeded(name);
      await service.recordSuccessfulSignIn(user.uuid);
      return { ok: true, user, password: (await users.password(user.uuid))! };
    },
    roleUuidsOf: (userUuid) => users.roles(userUuid),
    async scopesOf(userUuid) {
      return scopeNamesOfRoles(await users.roles(userUuid));
    },
    async isSuper(userUuid) {
      return (await users.roles(userUuid)).includes(ROLE_UUIDS.superUser);
    },
    async principalForUser(userUuid, via, extra = {}) {
      const user = await users.byUuid(userUuid);
      if (!user || user.disabled) return undefined;
      const roles = await users.roles(userUuid);
      const p = await users.password(userUuid);
      const st = p && state(p);
      return {
        kind: "user",
        uuid: user.uuid,
        isSuper: roles.includes(ROLE_UUIDS.superUser),
        scopes: scopeNamesOfRoles(roles),
        via,
        ...(st && (st.isTemporary || st.expired) ? { restricted: "password_change" as const } : {}),
        ...extra,
      };
    },
    async userResource(userUuid, temporaryPassword) {
      const u = await users.byUuid(userUuid);
      const p = u && (await users.password(userUuid));
      if (!u || !p) return undefined;
      const roles = await users.roles(userUuid);
      return userView(
        u,
        p,
        await emails.ofUsers([userUuid]),
        roles,
        roles.includes(ROLE_UUIDS.superUser),
        temporaryPassword,
      );
    },
    catalogueTimes: (uuid) => times.get(uuid) ?? epoch,
    onUserDeleted(fn) {
      svc.events.on("userDeleted", fn);
    },
    userDeleted: (userUuid) => svc.events.emit("userDeleted", userUuid),
    noteTokenUse(tokenId) {
      pendingUse.set(tokenId, nowIso());
    },
    async flushTokenUse() {
      const batch = [...pendingUse];
      pendingUse.clear();
      for (const [id, at] of batch) await tokens.touch(id, at);
    },
  };
  return service;
}

/** Every catalogue uuid the service knows (roles and scopes). */
