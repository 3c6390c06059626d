// What the organisation area needs to know about users, read through the accounts service (svc.accounts):
// existence, name and e-mails (for Member bodies), lookup by e-mail address, super-user status.
import { ROLE_UUIDS } from "../../accounts/service/catalogue.js";
import type { AccountsService } from "../../accounts/service/accounts-service.js";
import { emailView } from "../../accounts/service/views.js";

export interface UserCard {
  uuid: string;
  name: string;
  emails: ReturnType<typeof emailView>[];
}

const SUPER_CACHE_MS = 5_000;

export class UserDirectory {
  private readonly superCache = new Map<string, { value: boolean; until: number }>();
  private readonly users: AccountsService["users"];
  private readonly emails: AccountsService["emails"];
  constructor(accounts: Pick<AccountsService, "users" | "emails">) {
    this.users = accounts.users;
    this.emails = accounts.emails;
  }

  async exists(uuid: string): Promise<boolean> {
    return (await this.users.byUuid(uuid)) !== undefined;
  }
  async byEmail(address: string): Promise<string | undefined> {
    return (await this.emails.byAddress(address))?.user_uuid;
  }
  /** Cached for a few seconds: Check access asks it for every request naming a subject. */
  async isSuper(uuid: string): Promise<boolean> {
    const hit = this.superCache.get(uuid);
    if (hit && hit.until > Date.now()) return hit.value;
    const value = (await this.users.roles(uuid)).includes(ROLE_UUIDS.superUser);
    if (this.superCache.size > 10_000) this.superCache.clear();
    this.superCache.set(uuid, { value, until: Date.now() + SUPER_CACHE_MS });
    return value;
  }
  /** Cards of the given users (missing users are absent from the map). */
  async cards(uuids: readonly string[]): Promise<Map<string, UserCard>> {
    const out = new Map<string, UserCard>();
    if (uuids.length === 0) return out;
    for (const u of await this.users.byUuids(uuids)) out.set(u.uuid, { uuid: u.uuid, name: u.name, emails: [] });
    for (const e of await this.emails.ofUsers([...out.keys()])) out.get(e.user_uuid)?.emails.push(emailView(e));
    return out;
  }
}
