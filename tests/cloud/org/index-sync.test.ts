// The in-memory org index stays in step with the database: after a random run of writes through
// the API, the live index equals one freshly loaded from the database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OrgIndex } from "../../../cloud/org/service/org-index.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, caller, json, makeUser, MEMBER, READ_ONLY, type Call, type TestUser } from "./helpers.js";

/** A comparable picture of an index: sorted plain data, empty entries dropped. */
function snapshot(ix: OrgIndex) {
  const sortObj = <V>(entries: Array<[string, V]>) => Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1)));
  const members = (m: Map<string, Map<string, { roles: readonly string[]; owner: boolean }>>) =>
    sortObj(
      [...m]
        .filter(([, v]) => v.size > 0)
        .map(([k, v]) => [k, sortObj([...v].map(([u, e]) => [u, { roles: [...e.roles], owner: e.owner }]))]),
    );
  const sets = (m: Map<string, Set<string>>) =>
    sortObj([...m].filter(([, v]) => v.size > 0).map(([k, v]) => [k, [...v].sort()]));
  return {
    groups: sortObj([...ix.groups].map(([k, v]) => [k, v.parent])),
    projects: sortObj([...ix.projects].map(([k, v]) => [k, v.group])),
    groupMembers: members(ix.groupMembers),
    projectMembers: members(ix.projectMembers),
    userGroups: sets(ix.userGroups),
    userProjects: sets(ix.userProjects),
    edges: sortObj([...ix.edges].map(([k, v]) => [k, v.owner])),
    projectEdges: sets(ix.projectEdges),
  };
}

describe("org index and database", () => {
  let peer: TestPeer;
  let admin: Call;
  const users: TestUser[] = [];
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    for (const n of ["sync-a", "sync-b", "sync-c"]) users.push(await makeUser(peer, admin, n));
  });
  afterAll(async () => {
    await peer?.stop();
  });

  it("agree after a random run of writes", async () => {
    let seed = 7;
    const pick = <T>(xs: T[]): T => xs[((seed = (seed * 16807) % 2147483647), seed % xs.length)]!;
    const groups: string[] = [
      (await json(admin("/auth/groups", { method: "POST", json: { name: "sync-root" } }), 201)).uuid,
    ];
    const projects: string[] = [];
    const edges: Array<{ uuid: string; name: string }> = [];
    let n = 0;
    const ops: Array<() => unknown> = [
      async () =>
        groups.push(
          (await admin(`/auth/groups/${pick(groups)}/groups`, { method: "POST", json: { name: `g${n++}` } })).body
            .uuid ?? groups[0],
        ),
      async () => {
        const r = await admin(`/auth/groups/${pick(groups)}/projects`, { method: "POST", json: { name: `p${n++}` } });
        if (r.status === 201) projects.push(r.body.uuid);
      },
      () =>
        admin(`/auth/groups/${pick(groups)}/members`, {
          method: "POST",
          json: { user_uuid: pick(users).uuid, role_uuids: [pick([MEMBER, READ_ONLY])] },
        }),
      () =>
        projects.length &&
        admin(`/auth/projects/${pick(projects)}/members`, {
          method: "POST",
          json: { user_uuid: pick(users).uuid, role_uuids: [MEMBER] },
        }),
      () =>
        projects.length &&
        admin(`/auth/projects/${pick(projects)}/members/${pick(users).uuid}`, {
          method: "PATCH",
          json: { role_uuids: [READ_ONLY] },
        }),
      () => admin(`/auth/groups/${pick(groups)}/members/${pick(users).uuid}/owner`, { method: "PUT" }),
      () => admin(`/auth/groups/${pick(groups)}/members/${pick(users).uuid}/owner`, { method: "DELETE" }),
      () => admin(`/auth/groups/${pick(groups)}/members/${pick(users).uuid}`, { method: "DELETE" }),
      () =>
        projects.length && admin(`/auth/projects/${pick(projects)}/members/${pick(users).uuid}`, { method: "DELETE" }),
      async () => {
        const r = await admin(`/auth/users/${pick(users).uuid}/edges`, { method: "POST", json: { name: `e${n++}` } });
        edges.push({ uuid: r.body.uuid, name: r.body.name });
      },
      () =>
        edges.length &&
        projects.length &&
        admin(`/auth/projects/${pick(projects)}/edges`, { method: "POST", json: { edge_name: pick(edges).name } }),
      () =>
        edges.length &&
        projects.length &&
        admin(`/auth/projects/${pick(projects)}/edges/${pick(edges).uuid}`, { method: "DELETE" }),
      () => edges.length && admin(`/auth/edges/${pick(edges).uuid}/owner`, { method: "DELETE" }),
      () => edges.length && admin(`/auth/edges/${pick(edges).uuid}`, { method: "DELETE" }),
      () => projects.length && admin(`/auth/projects/${pick(projects)}`, { method: "DELETE" }),
      () => admin(`/auth/groups/${pick(groups)}`, { method: "DELETE" }),
    ];
    for (let i = 0; i < 300; i++) {
      const r = (await pick(ops)()) as { status?: number } | number;
      if (typeof r === "object" && r.status !== undefined) expect(r.status).toBeLessThan(500);
    }
    const fresh = new OrgIndex();
    await fresh.load(peer.svc.db);
    const live = snapshot(peer.svc.org.index);
    expect(Object.keys(live.projectMembers).length + Object.keys(live.groupMembers).length).toBeGreaterThan(3);
    expect(live).toEqual(snapshot(fresh));
  });
});
