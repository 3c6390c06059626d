// In-memory index of the organisation: the group tree, projects, memberships and project edges.
// Loaded once at start and updated by the org service after each committed write, so access
// decisions never scan the database. `epoch` changes on every update (cache invalidation).
import type { Queryable } from "../../database/db.js";
import { readOrgSnapshot } from "../repo/org-snapshot.js";

export interface MemberEntry {
  roles: readonly string[];
  owner: boolean;
}

/** What a user holds in a group or project: own membership plus what ancestor groups give. */
export interface Standing {
  member: boolean;
  direct?: MemberEntry;
  owner: boolean;
  inheritedOwner: boolean;
  roles: readonly string[];
  inherited: readonly string[];
}

type Members = Map<string, Map<string, MemberEntry>>;

const addTo = <K, V>(m: Map<K, Set<V>>, k: K, v: V) => (m.get(k) ?? m.set(k, new Set()).get(k)!).add(v);

export class OrgIndex {
  epoch = 0;
  readonly groups = new Map<string, { parent: string | null }>();
  readonly projects = new Map<string, { group: string }>();
  readonly groupMembers: Members = new Map();
  readonly projectMembers: Members = new Map();
  readonly userGroups = new Map<string, Set<string>>();
  readonly userProjects = new Map<string, Set<string>>();
  readonly edges = new Map<string, { owner: string | null }>();
  readonly projectEdges = new Map<string, Set<string>>();

  /** Called after each local update (not while loading): the org module tells the other peers. */
  onUpdate: () => void = () => {};
  private loading = false;

  private changed() {
    this.epoch++;
    if (!this.loading) this.onUpdate();
  }

  async load(db: Queryable): Promise<void> {
    const snapshot = await readOrgSnapshot(db);
    this.loading = true;
    try {
      this.fill(snapshot);
    } finally {
      this.loading = false;
    }
    this.epoch++;
  }

  /**
   * Reads the whole organisation again (another peer changed it) and swaps it in synchronously, so no
   * access check sees half of it. A local update made during the read means the read may predate it: read again.
   */
  async reload(db: Queryable): Promise<void> {
    for (;;) {
      const before = this.epoch;
      const fresh = new OrgIndex();
      await fresh.load(db);
      if (this.epoch !== before) continue;
      for (const k of [
        "groups",
        "projects",
        "groupMembers",
        "projectMembers",
        "userGroups",
        "userProjects",
        "edges",
        "projectEdges",
      ] as const) {
        const m = this[k] as Map<string, unknown>;
        m.clear();
        for (const [key, v] of fresh[k] as Map<string, unknown>) m.set(key, v);
      }
      this.epoch++;
      return;
    }
  }

  private fill(snapshot: Awaited<ReturnType<typeof readOrgSnapshot>>): void {
    for (const g of snapshot.groups) this.groups.set(g.uuid, { parent: g.parent_uuid });
    for (const p of snapshot.projects) this.projects.set(p.uuid, { group: p.group_uuid });
    for (const m of snapshot.groupMembers)
      this.setGroupMember(m.scope, m.user_uuid, { roles: JSON.parse(m.role_uuids), owner: !!m.is_owner });
    for (const m of snapshot.projectMembers)
      this.setProjectMember(m.scope, m.user_uuid, { roles: JSON.parse(m.role_uuids), owner: !!m.is_owner });
    for (const e of snapshot.edges) this.edges.set(e.uuid, { owner: e.owner_uuid });
    for (const pe of snapshot.projectEdges) addTo(this.projectEdges, pe.project_uuid, pe.edge_uuid);
  }

  // --- updates (called after the database write committed) ---
  setGroup(uuid: string, parent: string | null) {
    this.groups.set(uuid, { parent });
    this.changed();
  }
  removeGroup(uuid: string) {
    this.groups.delete(uuid);
    for (const u of this.groupMembers.get(uuid)?.keys() ?? []) this.userGroups.get(u)?.delete(uuid);
    this.groupMembers.delete(uuid);
    this.changed();
  }
  setProject(uuid: string, group: string) {
    this.projects.set(uuid, { group });
    this.changed();
  }
  removeProject(uuid: string) {
    this.projects.delete(uuid);
    for (const u of this.projectMembers.get(uuid)?.keys() ?? []) this.userProjects.get(u)?.delete(uuid);
    this.projectMembers.delete(uuid);
    this.projectEdges.delete(uuid);
    this.changed();
  }
  setGroupMember(group: string, user: string, entry: MemberEntry) {
    (this.groupMembers.get(group) ?? this.groupMembers.set(group, new Map()).get(group)!).set(user, entry);
    addTo(this.userGroups, user, group);
    this.changed();
  }
  removeGroupMember(group: string, user: string) {
    this.groupMembers.get(group)?.delete(user);
    this.userGroups.get(user)?.delete(group);
    this.changed();
  }
  setProjectMember(project: string, user: string, entry: MemberEntry) {
    (this.projectMembers.get(project) ?? this.projectMembers.set(project, new Map()).get(project)!).set(user, entry);
    addTo(this.userProjects, user, project);
    this.changed();
  }
  removeProjectMember(project: string, user: string) {
    this.projectMembers.get(project)?.delete(user);
    this.userProjects.get(user)?.delete(project);
    this.changed();
  }
  /** A deleted user leaves every group and project. */
  forgetUser(user: string) {
    for (const g of this.userGroups.get(user) ?? []) this.groupMembers.get(g)?.delete(user);
    for (const p of this.userProjects.get(user) ?? []) this.projectMembers.get(p)?.delete(user);
    this.userGroups.delete(user);
    this.userProjects.delete(user);
    for (const e of this.edges.values()) if (e.owner === user) e.owner = null;
    this.changed();
  }
  setEdge(uuid: string, owner: string | null) {
    this.edges.set(uuid, { owner });
    this.changed();
  }
  removeEdge(uuid: string) {
    this.edges.delete(uuid);
    for (const set of this.projectEdges.values()) set.delete(uuid);
    this.changed();
  }
  addProjectEdge(project: string, edge: string) {
    addTo(this.projectEdges, project, edge);
    this.changed();
  }
  removeProjectEdge(project: string, edge: string) {
    this.projectEdges.get(project)?.delete(edge);
    this.changed();
  }

  // --- queries ---
  /** The group and its ancestors, nearest first. */
  chain(group: string | null | undefined): string[] {
    const out: string[] = [];
    for (let g = group; g && out.length < 64; g = this.groups.get(g)?.parent) out.push(g);
    return out;
  }
  depth(group: string): number {
    return this.chain(group).length;
  }
  standingInGroup(group: string, user: string): Standing {
    return this.standing(this.groupMembers.get(group)?.get(user), this.chain(this.groups.get(group)?.parent), user);
  }
  standingInProject(project: string, user: string): Standing {
    return this.standing(
      this.projectMembers.get(project)?.get(user),
      this.chain(this.projects.get(project)?.group),
      user,
    );
  }
  private standing(direct: MemberEntry | undefined, ancestors: string[], user: string): Standing {
    let inheritedOwner = false;
    let inherited: string[] | undefined;
    let member = direct !== undefined;
    for (const g of ancestors) {
      const e = this.groupMembers.get(g)?.get(user);
      if (!e) continue;
      member = true;
      inheritedOwner ||= e.owner;
      if (e.roles.length) (inherited ??= []).push(...e.roles);
    }
    return {
      member,
      direct,
      owner: (direct?.owner ?? false) || inheritedOwner,
      inheritedOwner,
      roles: direct?.roles ?? [],
      inherited: inherited ? [...new Set(inherited)] : [],
    };
  }
  /** An edge belongs to a project when it was added to it, or when its owner belongs to it. */
  edgeBelongs(project: string, edge: string): boolean {
    if (this.projectEdges.get(project)?.has(edge)) return true;
    const owner = this.edges.get(edge)?.owner;
    return !!owner && this.projects.has(project) && this.standingInProject(project, owner).member;
  }
  /** Groups the user belongs to directly or through an ancestor group. */
  groupsOf(user: string): Set<string> {
    const direct = this.userGroups.get(user) ?? new Set<string>();
    const out = new Set<string>();
    for (const [g, info] of this.groups) {
      if (direct.has(g) || this.chain(info.parent).some((a) => direct.has(a))) out.add(g);
    }
    return out;
  }
  /** Projects the user belongs to directly or through an ancestor group. */
  projectsOf(user: string): Set<string> {
    const groups = this.groupsOf(user);
    const out = new Set(this.userProjects.get(user) ?? []);
    for (const [p, info] of this.projects) if (groups.has(info.group)) out.add(p);
    return out;
  }
}
