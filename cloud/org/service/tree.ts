// Groups, sub-groups and projects. The creator (a user) of a group or project becomes its owner.
// Writes go to the database first, then to the org index.
import crypto from "node:crypto";
import type { Principal } from "../../auth/principal.js";
import { Conflict, Forbidden, NotFound } from "../../errors.js";
import { pageInfo } from "../../http/query.js";
import { isUniqueViolation, type Db } from "../../database/db.js";
import { MAX_GROUP_DEPTH, MAX_PROJECTS_PER_GROUP } from "./limits.js";
import type { OrgIndex } from "./org-index.js";
import { GroupRepo, ProjectRepo, type GroupRow, type ProjectRow } from "../repo/groups.js";
import { MemberRepo } from "../repo/members.js";
import type { Paging, Sort } from "../repo/sql.js";
import { groupView, projectView } from "./views.js";

import { nowIso as now } from "./time.js";
const dupName = (what: string) =>
  new Conflict(`a ${what} with this name already exists here`, { name: "already exists" });

export class TreeService {
  readonly groups: GroupRepo;
  readonly projects: ProjectRepo;
  constructor(
    private readonly db: Db,
    private readonly index: OrgIndex,
  ) {
    this.groups = new GroupRepo(db);
    this.projects = new ProjectRepo(db);
  }

  // --- groups ---
  async listGroups(f: { uuids?: readonly string[]; parent?: string }, sort: Sort, paging: Paging) {
    const { rows, total } = await this.groups.list(f, sort, paging);
    return { items: rows.map(groupView), page: pageInfo(total, paging.page, paging.perPage) };
  }
  async groupRow(uuid: string): Promise<GroupRow> {
    const g = await this.groups.get(uuid.toLowerCase());
    if (!g) throw new NotFound("group not found");
    return g;
  }
  async createGroup(name: string, parent: string | null, creator: Principal | undefined) {
    if (parent) {
      await this.groupRow(parent);
      if (this.index.depth(parent) >= MAX_GROUP_DEPTH)
        throw new Forbidden(`groups may be nested at most ${MAX_GROUP_DEPTH} levels deep`, "exceeded_max_groups_count");
    }
    const at = now();
    const row: GroupRow = { uuid: crypto.randomUUID(), parent_uuid: parent, name, created_at: at, updated_at: at };
    const owner = creator?.kind === "user" ? creator.uuid : undefined;
    try {
      await this.db.transaction(async (tx) => {
        await new GroupRepo(tx).insert(row);
        if (owner) await new MemberRepo(tx, "group_members", "group_uuid").upsert(ownerRow(row.uuid, owner, at));
      });
    } catch (err) {
      throw isUniqueViolation(err) ? dupName("group") : err;
    }
    this.index.setGroup(row.uuid, parent);
    if (owner) this.index.setGroupMember(row.uuid, owner, { roles: [], owner: true });
    return groupView(row);
  }
  async renameGroup(uuid: string, name: string | undefined) {
    const g = await this.groupRow(uuid);
    if (name === undefined || name === g.name) return groupView(g);
    const at = now();
    try {
      await this.groups.rename(g.uuid, name, at);
    } catch (err) {
      throw isUniqueViolation(err) ? dupName("group") : err;
    }
    return groupView({ ...g, name, updated_at: at });
  }
  /** Only an empty group (no sub-groups, no projects) may be deleted. */
  async deleteGroup(uuid: string) {
    const g = await this.groupRow(uuid);
    const n = await this.groups.childCounts(g.uuid);
    if (n.groups || n.projects) throw new Conflict("the group still has sub-groups or projects; delete them first");
    await this.groups.delete(g.uuid);
    this.index.removeGroup(g.uuid);
  }

  // --- projects ---
  async listProjects(
    f: { uuids?: readonly string[]; group?: string; sinceCreatedAt?: string },
    sort: Sort,
    paging: Paging,
  ) {
    const { rows, total } = await this.projects.list(f, sort, paging);
    return { items: rows.map(projectView), page: pageInfo(total, paging.page, paging.perPage) };
  }
  async projectRow(uuid: string): Promise<ProjectRow> {
    const p = await this.projects.get(uuid.toLowerCase());
    if (!p) throw new NotFound("project not found");
    return p;
  }
  async createProject(group: string, name: string, creator: Principal | undefined) {
    const g = await this.groupRow(group);
    if ((await this.projects.countIn(g.uuid)) >= MAX_PROJECTS_PER_GROUP)
      throw new Forbidden(
        `a group may hold at most ${MAX_PROJECTS_PER_GROUP} projects`,
        "exceeded_max_projects_count_per_group",
      );
    const at = now();
    const row: ProjectRow = { uuid: crypto.randomUUID(), group_uuid: g.uuid, name, created_at: at, updated_at: at };
    const owner = creator?.kind === "user" ? creator.uuid : undefined;
    try {
      await this.db.transaction(async (tx) => {
        await new ProjectRepo(tx).insert(row);
        if (owner) await new MemberRepo(tx, "project_members", "project_uuid").upsert(ownerRow(row.uuid, owner, at));
      });
    } catch (err) {
      throw isUniqueViolation(err) ? dupName("project") : err;
    }
    this.index.setProject(row.uuid, g.uuid);
    if (owner) this.index.setProjectMember(row.uuid, owner, { roles: [], owner: true });
    return projectView(row);
  }
  async renameProject(uuid: string, name: string) {
    const p = await this.projectRow(uuid);
    if (name === p.name) return projectView(p);
    const at = now();
    try {
      await this.projects.rename(p.uuid, name, at);
    } catch (err) {
      throw isUniqueViolation(err) ? dupName("project") : err;
    }
    return projectView({ ...p, name, updated_at: at });
  }
  /** Only an owner (directly or through a parent group) or a super user may delete a project. */
  async deleteProject(uuid: string, caller: Principal) {
    const p = await this.projectRow(uuid);
    const owner = caller.isSuper || (caller.kind === "user" && this.index.standingInProject(p.uuid, caller.uuid).owner);
    if (!owner) throw new Forbidden("You cannot delete a project. Because you are not a project owner.");
    await this.projects.delete(p.uuid);
    this.index.removeProject(p.uuid);
  }
}

const ownerRow = (scope: string, user: string, at: string) => ({
  scope_uuid: scope,
  user_uuid: user,
  role_uuids: [],
  is_owner: true,
  created_at: at,
  updated_at: at,
});
