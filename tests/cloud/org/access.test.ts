// The access rules as one table, asked three ways that must agree: Check access (with the
// subject's own scopes), Check own access (as the subject), and the route guard on real routes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  adminToken,
  bearer,
  caller,
  edgeToken,
  json,
  makeEdge,
  makeUser,
  MEMBER,
  READ_ONLY,
  type Call,
  type TestUser,
} from "./helpers.js";

const DEFAULT_PROJECT = "00000000-0000-0000-0000-000000000000";
const MEMBER_SCOPES = [
  "me:a",
  "users:r",
  "roles:r",
  "edges:r",
  "groups:r",
  "projects:r",
  "measurements:r",
  "measurements:w",
  "iscp:r",
  "iscp:w",
];

interface Who {
  uuid: string;
  scopes: string[];
  call: Call;
}

describe("access rules", () => {
  let peer: TestPeer;
  let admin: Call;
  let adminUuid: string;
  const who: Record<string, Who> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    adminUuid = (await json(admin("/auth/users/me"), 200)).uuid;
    const users: Record<string, TestUser> = {};
    for (const n of ["alice", "bob", "carol", "dave"]) users[n] = await makeUser(peer, admin, n);
    for (const [n, u] of Object.entries(users)) who[n] = { uuid: u.uuid, scopes: MEMBER_SCOPES, call: u.call };
    const erin = await makeUser(peer, admin, "erin", [READ_ONLY]); // all:r: GET /** outside projects and groups
    who.erin = { uuid: erin.uuid, scopes: ["me:a", "all:r", "iscp:r"], call: erin.call };
    // G > SG > P1, and P2 directly in G.
    ids.G = (await json(admin("/auth/groups", { method: "POST", json: { name: "G" } }), 201)).uuid;
    ids.SG = (await json(admin(`/auth/groups/${ids.G}/groups`, { method: "POST", json: { name: "SG" } }), 201)).uuid;
    ids.P1 = (await json(admin(`/auth/groups/${ids.SG}/projects`, { method: "POST", json: { name: "P1" } }), 201)).uuid;
    ids.P2 = (await json(admin(`/auth/groups/${ids.G}/projects`, { method: "POST", json: { name: "P2" } }), 201)).uuid;
    // alice: member role in G (inherited by SG and P1, P2); bob: read-only in P1; carol: owner of P2.
    await json(
      admin(`/auth/groups/${ids.G}/members`, {
        method: "POST",
        json: { user_uuid: users.alice!.uuid, role_uuids: [MEMBER] },
      }),
      200,
    );
    await json(
      admin(`/auth/projects/${ids.P1}/members`, {
        method: "POST",
        json: { user_uuid: users.bob!.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    await json(
      admin(`/auth/projects/${ids.P2}/members`, {
        method: "POST",
        json: { user_email_address: "carol@example.test", role_uuids: [] },
      }),
      200,
    );
    await json(admin(`/auth/projects/${ids.P2}/members/${users.carol!.uuid}/owner`, { method: "PUT" }), 200);
    // E1 added to P1; E2 owned by bob (a member of P1); E3 unrelated.
    const e1 = await makeEdge(admin, "E1");
    const e2 = await makeEdge(users.bob!.call, "E2", "/auth/users/me/edges");
    const e3 = await makeEdge(admin, "E3");
    await json(
      admin(`/auth/projects/${ids.P1}/edges`, { method: "POST", json: { edge_name: "E1", nickname: "first" } }),
      200,
    );
    for (const [n, e] of Object.entries({ E1: e1, E2: e2, E3: e3 })) {
      const t = await edgeToken(peer, e);
      expect(t.status, JSON.stringify(t.body)).toBe(200);
      who[n] = { uuid: e.uuid, scopes: t.body.scope.split(" "), call: bearer(peer, t.body.access_token) };
    }
  });
  afterAll(async () => {
    await peer?.stop();
  });

  // [subject, method, path template, expected, guard body?]: `guard` rows are also sent as real
  // requests; writes carry an invalid body so that passing the guard shows as 400, not a change.
  type Row = [string, string, string, boolean, ("get" | "bad-body")?];
  const table: Row[] = [
    ["alice", "GET", "/auth/projects/{P1}/members", true, "get"], // role inherited from G through SG
    ["alice", "POST", "/auth/projects/{P1}/members", false, "bad-body"], // member role: no projects:w
    ["alice", "GET", "/auth/groups/{SG}", true, "get"], // inherited from the parent group
    ["alice", "GET", "/auth/groups/{G}/members", true, "get"],
    ["alice", "PATCH", "/auth/groups/{G}", false, "bad-body"],
    ["bob", "GET", "/auth/projects/{P1}/members", true, "get"], // read-only role held in P1
    ["bob", "POST", "/auth/projects/{P1}/members", false, "bad-body"],
    ["bob", "GET", "/auth/projects/{P2}/members", false, "get"], // not a member of P2
    ["bob", "GET", "/auth/groups/{G}", false, "get"], // project membership gives nothing in groups
    ["carol", "POST", "/auth/projects/{P2}/members", true, "bad-body"], // owner holds everything
    ["carol", "DELETE", "/auth/projects/{P2}/edges/{E3}", true],
    ["carol", "GET", "/auth/projects/{P1}", false, "get"],
    ["dave", "GET", "/auth/projects/{P1}", false, "get"], // non-member
    ["dave", "GET", "/auth/projects", true, "get"], // neither project nor group: own scopes
    ["dave", "GET", "/api/v1/projects/{P1}/measurements", false], // /api prefix is understood
    ["dave", "GET", "/v2/nothing/here", false], // matches no scope
    ["dave", "GET", "/auth/projects/{%P1}/members", false, "get"], // a percent-encoded UUID still names P1
    ["dave", "GET", "/auth/groups/{%G}/members", false, "get"],
    ["bob", "GET", "/auth/projects/{%P1}/members", true, "get"],
    ["alice", "GET", "/auth/groups/{%SG}", true, "get"],
    ["erin", "GET", "/auth/projects/{P1}/members", false, "get"], // all:r does not open projects
    ["erin", "GET", "/AUTH/PROJECTS/{P1}/MEMBERS", false, "get"], // the router ignores case; so does the decision
    ["erin", "GET", "/auth/Groups/{G}", false, "get"],
    ["erin", "GET", "/Auth/Users", true, "get"],
    ["erin", "GET", "/auth/users/{alice}/TOKENS", false, "get"], // nor does case dodge a deny
    ["bob", "GET", "/Auth/Projects/{P1}/Members", true, "get"],
    ["bob", "GET", "/auth/projects/{P1}/../{P2}/members", false], // dot segments are resolved first
    ["bob", "GET", "/auth/projects/{P2}/./../{P1}/members", true],
    ["dave", "GET", "/v1/projects/not-a-uuid/measurements", true], // no template: scopes decide
    ["dave", "POST", `/v1/projects/${DEFAULT_PROJECT}/measurements`, true], // default project: scopes
    ["dave", "GET", "/auth/users/{alice}/tokens", false, "get"], // users:r allows /auth/users/** but denies tokens
    ["dave", "GET", "/auth/users/me/tokens", true, "get"], // own account: served to every signed-in user
    ["bob", "DELETE", "/auth/users/me/emails/1", true],
    ["E1", "POST", "/v1/projects/{P1}/measurements", true], // project edge, request scopes
    ["E1", "GET", "/auth/projects/{P1}/members", false], // edge scopes do not cover it
    ["E1", "POST", "/v1/projects/{P2}/measurements", false], // not in P2
    ["E1", "GET", "/auth/groups/{G}", false], // edges never belong to groups
    ["E2", "POST", "/v1/projects/{P1}/measurements", true], // its owner belongs to P1
    ["E3", "POST", "/v1/projects/{P1}/measurements", false],
    ["E3", "POST", `/v1/projects/${DEFAULT_PROJECT}/measurements`, true],
    ["E3", "GET", "/auth/edges/me", true],
  ];
  // `{%X}` is X's UUID with its first character percent-encoded (the router decodes it again).
  const fill = (p: string) =>
    p.replace(/\{(%?)(\w+)\}/g, (_, pct: string, k: string) => {
      const v = ids[k] ?? who[k]!.uuid;
      return pct ? `%${v.charCodeAt(0).toString(16)}${v.slice(1)}` : v;
    });

  it("Check access decides every row from the subject and the request's scopes", async () => {
    for (const [subject, method, path, expected] of table) {
      const r = await json(
        admin("/auth/authorize/http", {
          method: "POST",
          json: { subject: who[subject]!.uuid, scopes: who[subject]!.scopes, method, path: fill(path) },
        }),
        200,
      );
      expect(r, `${subject} ${method} ${path}`).toEqual({ result: expected });
    }
  });

  it("Check own access agrees, asked by the subject itself (API token or edge bearer token)", async () => {
    for (const [subject, method, path, expected] of table) {
      const r = await json(
        who[subject]!.call("/auth/users/me/authorize/http", { method: "POST", json: { method, path: fill(path) } }),
        200,
      );
      expect(r, `${subject} ${method} ${path}`).toEqual({ result: expected });
    }
  });

  it("the route guard agrees on real routes", async () => {
    for (const [subject, method, path, expected, mode] of table) {
      if (!mode) continue;
      const r = await who[subject]!.call(fill(path), {
        method,
        ...(mode === "bad-body" ? { json: { name: "", role_uuids: "x" } } : {}),
      });
      const label = `${subject} ${method} ${path} -> ${r.status} ${JSON.stringify(r.body)}`;
      if (expected) expect([200, 400], label).toContain(r.status);
      else expect(r, label).toMatchObject({ status: 403, body: { type: "forbidden", title: "access denied" } });
    }
  });

  it("without a subject only the request's scopes count, and a deny beats an allow", async () => {
    const ask = async (scopes: string[], method: string, path: string) =>
      (await json(admin("/auth/authorize/http", { method: "POST", json: { scopes, method, path: fill(path) } }), 200))
        .result;
    expect(await ask(["projects:r"], "GET", "/auth/projects/{P1}/members")).toBe(true);
    expect(await ask([], "GET", "/auth/projects/{P1}/members")).toBe(false);
    expect(await ask(["all:a"], "GET", "/auth/users/{alice}/tokens")).toBe(true);
    expect(await ask(["all:a", "all:r"], "GET", "/auth/users/{alice}/tokens")).toBe(false);
    expect(await ask(["all:a", "all:r"], "GET", "/auth/users/{alice}/t%6Fkens")).toBe(false); // escapes do not dodge a deny
    expect(await ask(["all:r"], "GET", "/auth/users/{alice}")).toBe(true);
    expect(await ask(["no-such-scope"], "GET", "/auth/projects")).toBe(false);
    // Paths without a leading slash, with /api or with a query string are read the same way.
    expect(await ask(["projects:r"], "GET", "auth/projects?page=2")).toBe(true);
    expect(await ask(["projects:r"], "GET", "/api/auth/projects#top")).toBe(true);
    expect(await ask(["projects:r"], "GET", "/apix/auth/projects")).toBe(false);
  });

  it("a super user passes everything; Check access refuses callers without authorization scopes", async () => {
    const r = await json(
      admin("/auth/authorize/http", {
        method: "POST",
        json: { subject: adminUuid, scopes: [], method: "DELETE", path: fill("/auth/projects/{P1}") },
      }),
      200,
    );
    expect(r).toEqual({ result: true });
    const refused = await who.dave!.call("/auth/authorize/http", {
      method: "POST",
      json: { scopes: [], method: "GET", path: "/" },
    });
    expect(refused).toMatchObject({ status: 403, body: { type: "forbidden", title: "access denied" } });
    const bad = await admin("/auth/authorize/http", {
      method: "POST",
      json: { scopes: [], method: "TRACE", path: "/" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe("invalid_request");
  });

  it("decisions follow membership changes at once (the index is kept in step)", async () => {
    const ask = () =>
      who.dave!.call("/auth/users/me/authorize/http", {
        method: "POST",
        json: { method: "GET", path: fill("/auth/projects/{P1}/members") },
      });
    expect((await ask()).body).toEqual({ result: false });
    await json(
      admin(`/auth/groups/${ids.SG}/members`, {
        method: "POST",
        json: { user_uuid: who.dave!.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    expect((await ask()).body).toEqual({ result: true });
    await json(admin(`/auth/groups/${ids.SG}/members/${who.dave!.uuid}`, { method: "DELETE" }), 204);
    expect((await ask()).body).toEqual({ result: false });
    // An edge removed from the project loses it; a deleted edge loses everything.
    const e1 = () =>
      who.E1!.call("/auth/users/me/authorize/http", {
        method: "POST",
        json: { method: "POST", path: fill("/v1/projects/{P1}/measurements") },
      });
    expect((await e1()).body).toEqual({ result: true });
    await json(admin(`/auth/projects/${ids.P1}/edges/${who.E1!.uuid}`, { method: "DELETE" }), 204);
    expect((await e1()).body).toEqual({ result: false });
    await json(admin(`/auth/edges/${who.E3!.uuid}`, { method: "DELETE" }), 204);
    const gone = await who.E3!.call("/auth/users/me/authorize/http", {
      method: "POST",
      json: { method: "GET", path: "/v1/measurements" },
    });
    expect(gone.body).toEqual({ result: false });
  });
});
