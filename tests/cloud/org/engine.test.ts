// The access engine's parts (path classes, compiled scope sets) and the org index over a restart,
// a user deletion, and the iSCP questions of svc.org.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ISCP_MESSAGE_TYPES, ROLE_UUIDS, ROLES, SCOPES } from "../../../cloud/accounts/service/catalogue.js";
import { classify } from "../../../cloud/access/service/classify.js";
import { Policy } from "../../../cloud/access/service/policy.js";
import type { Principal } from "../../../cloud/auth/principal.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, caller, edgeToken, json, makeEdge, makeUser, MEMBER, READ_ONLY } from "./helpers.js";

const P = "0f8fad5b-d9cb-469f-a165-70867728950e";
const G = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
const ZERO = "00000000-0000-0000-0000-000000000000";

describe("path classification", () => {
  it.each([
    [`/v1/projects/${P}/measurements`, { kind: "project", uuid: P }],
    [`/v1/projects/${P}`, { kind: "project", uuid: P }],
    [`/auth/projects/${P.toUpperCase()}/members/x`, { kind: "project", uuid: P }],
    [`/iscp/projects/${P}/upstreams`, { kind: "project", uuid: P }],
    [`/auth/groups/${G}`, { kind: "group", uuid: G }],
    [`/auth/groups/${G}/projects`, { kind: "group", uuid: G }],
    [`/v1/projects/${ZERO}/measurements`, { kind: "none" }],
    ["/auth/projects", { kind: "none" }],
    [`/auth/projectsx/${P}`, { kind: "none" }],
    [`/v1/projects/${P}x/measurements`, { kind: "none" }],
    [`/media/projects/${P}`, { kind: "none" }],
    [`/auth/users/${G}/groups`, { kind: "none" }],
  ])("%s", (p, expected) => expect(classify(p)).toEqual(expected));
});

describe("compiled scope sets", () => {
  const policy = new Policy({
    scopes: SCOPES,
    roles: ROLES,
    ownerRoleUuid: ROLE_UUIDS.owner,
    iscpMessageTypes: ISCP_MESSAGE_TYPES,
  });
  it("follows the glob syntax: * one segment, ** any number, trailing slash ignored", () => {
    const users = policy.forScopes(["users:r"]);
    expect(users.test("GET", "/auth/users")).toBe(true);
    expect(users.test("GET", "/auth/users/")).toBe(true);
    expect(users.test("GET", "/auth/users/a/b/c")).toBe(true);
    expect(users.test("GET", "/auth/usersx")).toBe(false);
    expect(users.test("POST", "/auth/users")).toBe(false);
    expect(users.test("GET", "/auth/users/a/tokens")).toBe(false); // denied by the same scope
    expect(users.test("GET", "/auth/users/a/b/tokens")).toBe(true); // * is exactly one segment
  });
  it("lets a deny of one scope beat an allow of another, in any order", () => {
    expect(policy.forScopes(["all:a"]).test("GET", "/auth/users/u/tokens")).toBe(true);
    expect(policy.forScopes(["all:a", "all:r"]).test("GET", "/auth/users/u/tokens")).toBe(false);
    expect(policy.forScopes(["all:r", "all:a"]).test("GET", "/auth/users/u/tokens")).toBe(false);
    expect(policy.forScopes(["all:r", "all:a"]).test("DELETE", "/auth/users/u/tokens/1")).toBe(true);
  });
  it("gives the owner role everything and unknown roles nothing", () => {
    expect(policy.forRoles([ROLE_UUIDS.owner]).test("DELETE", "/anything")).toBe(true);
    expect(policy.forRoles(["00000000-0000-4000-8000-000000000000"]).test("GET", "/auth/users")).toBe(false);
    expect([...policy.forRoles([ROLE_UUIDS.edge]).iscpMessages].sort()).toEqual([
      "downstream",
      "downstream_call",
      "upstream",
      "upstream_call",
    ]);
  });
});

describe("org index over restart and user deletion; iSCP questions", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "org-engine-"));
  let peer: TestPeer | undefined;
  afterAll(async () => {
    await peer?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps decisions across a restart, forgets deleted users, and answers the broker", async () => {
    peer = await startTestPeer({ dataDir });
    let admin = caller(peer, await adminToken(peer));
    const uma = await makeUser(peer, admin, "uma");
    const vic = await makeUser(peer, admin, "vic", [READ_ONLY]);
    const group = (await json(admin("/auth/groups", { method: "POST", json: { name: "persist" } }), 201)).uuid;
    const sub = (
      await json(admin(`/auth/groups/${group}/groups`, { method: "POST", json: { name: "persist-sub" } }), 201)
    ).uuid;
    const project = (await json(admin(`/auth/groups/${sub}/projects`, { method: "POST", json: { name: "kept" } }), 201))
      .uuid;
    await json(
      admin(`/auth/groups/${group}/members`, { method: "POST", json: { user_uuid: uma.uuid, role_uuids: [MEMBER] } }),
      200,
    );
    await json(
      admin(`/auth/projects/${project}/members`, {
        method: "POST",
        json: { user_uuid: vic.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    const edge = await makeEdge(vic.call, "vics-edge", "/auth/users/me/edges");
    const stranger = await makeEdge(admin, "stranger");
    const adminToken1 = await adminToken(peer, "again");
    await peer.close();

    peer = await startTestPeer({ dataDir });
    admin = caller(peer, adminToken1);
    const ask = async (subject: string, scopes: string[], method: string, p: string) =>
      (await json(admin("/auth/authorize/http", { method: "POST", json: { subject, scopes, method, path: p } }), 200))
        .result;
    expect(await ask(uma.uuid, [], "GET", `/auth/projects/${project}/members`)).toBe(true);
    expect(await ask(uma.uuid, [], "POST", `/v1/projects/${project}/measurements`)).toBe(true);
    expect(await ask(vic.uuid, [], "POST", `/v1/projects/${project}/measurements`)).toBe(false);
    expect(await ask(edge.uuid, ["measurements:w"], "POST", `/v1/projects/${project}/measurements`)).toBe(true);
    expect(await ask(stranger.uuid, ["measurements:w"], "POST", `/v1/projects/${project}/measurements`)).toBe(false);

    // The broker's questions.
    const org = peer.svc.org;
    const principal = (uuid: string, kind: "user" | "edge", scopes: string[]): Principal => ({
      kind,
      uuid,
      isSuper: false,
      scopes,
      via: "bearer",
    });
    const edgeScopes = (await edgeToken(peer, edge)).body.scope.split(" ");
    expect(await org.canUseProject(principal(uma.uuid, "user", []), project)).toBe(true);
    expect(await org.canUseProject(principal(edge.uuid, "edge", edgeScopes), project)).toBe(true);
    expect(await org.canUseProject(principal(stranger.uuid, "edge", edgeScopes), project)).toBe(false);
    expect(await org.canUseProject(principal(stranger.uuid, "edge", edgeScopes), ZERO)).toBe(true);
    expect(
      await org.canUseProject({ kind: "user", uuid: "00000000-0000-4000-8000-00000000000a", isSuper: true }, project),
    ).toBe(true);
    expect([...org.iscpMessages(principal(edge.uuid, "edge", edgeScopes), project)].sort()).toEqual([
      "downstream",
      "downstream_call",
      "upstream",
      "upstream_call",
    ]);
    expect([...org.iscpMessages(principal(vic.uuid, "user", []), project)].sort()).toEqual([
      "downstream",
      "downstream_call",
    ]);
    expect(org.iscpMessages(principal(stranger.uuid, "edge", edgeScopes), project).size).toBe(0);

    // Deleting vic removes his membership; his edge loses its owner and with it the project.
    await json(admin(`/auth/users/${vic.uuid}`, { method: "DELETE" }), 204);
    expect((await admin(`/auth/projects/${project}/members/${vic.uuid}`)).status).toBe(404);
    expect((await json(admin(`/auth/edges/${edge.uuid}`), 200)).owner).toBeUndefined();
    expect(await ask(edge.uuid, ["measurements:w"], "POST", `/v1/projects/${project}/measurements`)).toBe(false);
  });
});
