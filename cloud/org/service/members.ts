// Members of a group or a project (one class for both): role_uuids, the owner attribute, and the
// roles inherited through parent groups. The owner role is held only through the owner attribute.
import { Conflict, Forbidden, Invalid, NotFound } from "../../errors.js";
import { pageInfo } from "../../http/query.js";
import { reply, type Reply } from "../../http/route.js";
import type { Policy } from "../../access/service/policy.js";
import { isUniqueViolation, type Db } from "../../database/db.js";
import type { OrgIndex, Standing } from "./org-index.js";
import { MemberRepo, type MemberRow } from "../repo/members.js";
import type { Paging, Sort } from "../repo/sql.js";
import type { UserDirectory } from "./users.js";
import { memberView } from "./views.js";

export type MemberView = ReturnType<typeof memberView>;

export interface AddMemberInput {
  user_uuid?: string;
  user_email_address?: string;
  role_uuids: readonly string[];
}

import { nowIso as now } from "./time.js";

export class MemberService {
  readonly repo: MemberRepo;
  constructor(
    private readonly db: Db,
    private readonly kind: "group" | "project",
    private readonly index: OrgIndex,
    private readonly users: UserDirectory,
    private readonly policy: Policy,
    private readonly exists: (uuid: string) => Promise<unknown>,
  ) {
    this.repo =
      kind === "group"
        ? new MemberRepo(db, "group_members", "group_uuid")
        : new MemberRepo(db, "project_members", "project_uuid");
  }

  private standing(scope: string, user: string): Standing {
    return this.kind === "group" ? this.index.standingInGroup(scope, user) : this.index.standingInProject(scope, user);
  }
  private inherited(scope: string, user: string): string[] {
    const s = this.standing(scope, user);
    return s.inheritedOwner
      ? [this.policy.ownerRoleUuid, ...s.inherited.filter((r) => r !== this.policy.ownerRoleUuid)]
      : [...s.inherited];
  }
  private async views(scope: string, rows: MemberRow[]): Promise<MemberView[]> {
    const cards = await this.users.cards(rows.map((r) => r.user_uuid));
    return rows.map((r) => memberView(r, cards.get(r.user_uuid), this.inherited(scope, r.user_uuid)));
  }
  private async row(scope: string, user: string): Promise<MemberRow> {
    await this.exists(scope);
    const m = await this.repo.get(scope, user.toLowerCase());
    if (!m) throw new NotFound("member not found");
    return m;
  }
  private sync(m: MemberRow) {
    if (this.kind === "group")
      this.index.setGroupMember(m.scope_uuid, m.user_uuid, { roles: m.role_uuids, owner: m.is_owner });
    else this.index.setProjectMember(m.scope_uuid, m.user_uuid, { roles: m.role_uuids, owner: m.is_owner });
  }
  /** Updates an existing membership (404 if it went away meanwhile) and the index. */
  private async write(m: MemberRow) {
    if (!(await this.repo.update(m))) throw new NotFound("member not found");
    this.sync(m);
  }
  private checkRoles(roles: readonly string[]): string[] {
    const out = [...new Set(roles.map((r) => r.toLowerCase()))];
    if (out.includes(this.policy.ownerRoleUuid)) throw new Forbidden("owner role cannot be changed.");
    const unknown = out.filter((r) => !this.policy.hasRole(r));
    if (unknown.length)
      throw new Invalid(`invalid body: role_uuids: no such role ${unknown[0]}`, { role_uuids: "no such role" });
    return out;
  }

  async list(scope: string, f: { userUuids?: readonly string[]; isOwner?: boolean }, sort: Sort, paging: Paging) {
    await this.exists(scope);
    let rows = await this.repo.all(scope);
    if (f.userUuids) {
      const wanted = new Set(f.userUuids.map((u) => u.toLowerCase()));
      rows = rows.filter((r) => wanted.has(r.user_uuid));
    }
    if (f.isOwner !== undefined) rows = rows.filter((r) => r.is_owner === f.isOwner);
    // Sorting by name needs the users' names: members of one group are few, so sort in memory.
    const all = await this.views(scope, rows);
    const key = (sort.key === "name" ? "name" : sort.key === "updated_at" ? "updated_at" : "created_at") as
      | "name"
      | "created_at"
      | "updated_at";
    all.sort(
      (a, b) =>
        (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : a.user_uuid < b.user_uuid ? -1 : 1) * (sort.desc ? -1 : 1),
    );
    const start = (paging.page - 1) * paging.perPage;
    return { items: all.slice(start, start + paging.perPage), page: pageInfo(all.length, paging.page, paging.perPage) };
  }

  async get(scope: string, user: string): Promise<MemberView> {
    return (await this.views(scope, [await this.row(scope, user)]))[0]!;
  }

  async add(scope: string, input: AddMemberInput): Promise<MemberView> {
    await this.exists(scope);
    const roles = this.checkRoles(input.role_uuids);
    let user = input.user_uuid?.toLowerCase();
    if (user !== undefined) {
      if (!(await this.users.exists(user)))
        throw new Invalid("invalid body: user_uuid: no such user", { user_uuid: "no such user" });
    } else if (input.user_email_address !== undefined) {
      user = await this.users.byEmail(input.user_email_address);
      if (!user)
        throw new Invalid("invalid body: user_email_address: no user has this address", {
          user_email_address: "no user has this address",
        });
    } else throw new Invalid("invalid body: user_uuid or user_email_address is required", { user_uuid: "required" });
    const at = now();
    const m: MemberRow = {
      scope_uuid: scope,
      user_uuid: user,
      role_uuids: roles,
      is_owner: false,
      created_at: at,
      updated_at: at,
    };
    try {
      await this.repo.insert(m);
    } catch (err) {
      throw isUniqueViolation(err)
        ? new Conflict("the user is already a member", { user_uuid: "already a member" })
        : err;
    }
    this.sync(m);
    return this.get(scope, user);
  }

  async update(scope: string, user: string, roleUuids: readonly string[] | undefined): Promise<MemberView> {
    const m = await this.row(scope, user);
    if (roleUuids !== undefined) {
      const next = { ...m, role_uuids: this.checkRoles(roleUuids), updated_at: now() };
      await this.write(next);
    }
    return this.get(scope, m.user_uuid);
  }

  async remove(scope: string, user: string): Promise<void> {
    const m = await this.row(scope, user);
    if (m.is_owner) throw new Forbidden("unremovable owner member");
    await this.repo.delete(scope, m.user_uuid);
    if (this.kind === "group") this.index.removeGroupMember(scope, m.user_uuid);
    else this.index.removeProjectMember(scope, m.user_uuid);
  }

  /** 304 when the member already is an owner. */
  async addOwner(scope: string, user: string): Promise<MemberView | Reply> {
    const m = await this.row(scope, user);
    if (m.is_owner) return reply(304);
    await this.write({ ...m, is_owner: true, updated_at: now() });
    return this.get(scope, m.user_uuid);
  }

  /** 304 when the member is no owner; refused when no other owner would remain. */
  async removeOwner(scope: string, user: string): Promise<Reply | undefined> {
    const m = await this.row(scope, user);
    if (!m.is_owner) return reply(304);
    const next = { ...m, is_owner: false, updated_at: now() };
    // Count and write in one transaction, so two concurrent removals cannot leave no owner.
    await this.db.transaction(async (tx) => {
      const repo = new MemberRepo(tx, this.repo.table, this.repo.scopeCol);
      if ((await repo.ownerCount(scope)) <= 1) throw new Forbidden(`${this.kind} must have at least one owner.`);
      if (!(await repo.update(next))) throw new NotFound("member not found");
    });
    this.sync(next);
    return undefined;
  }
}
