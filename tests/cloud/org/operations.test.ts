// Every organisation and access-check operation is served under its real intdash operationId,
// method and path (the intdash REST API's auth area), with its documented success status.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";

const OPS: Array<[string, string, string, number]> = [
  ["checkHTTPAuthorization", "POST", "/auth/authorize/http", 200],
  ["checkMeHTTPAuthorization", "POST", "/auth/users/me/authorize/http", 200],
  ["listEdges", "GET", "/auth/edges", 200],
  ["createEdge", "POST", "/auth/edges", 201],
  ["getMeAsEdge", "GET", "/auth/edges/me", 200],
  ["getEdge", "GET", "/auth/edges/{edge_uuid}", 200],
  ["updateEdge", "PATCH", "/auth/edges/{edge_uuid}", 200],
  ["deleteEdge", "DELETE", "/auth/edges/{edge_uuid}", 204],
  ["assignOwner", "POST", "/auth/edges/{edge_uuid}/owner", 200],
  ["removeOwner", "DELETE", "/auth/edges/{edge_uuid}/owner", 204],
  ["listUsersEdges", "GET", "/auth/users/{user_uuid}/edges", 200],
  ["createUsersEdge", "POST", "/auth/users/{user_uuid}/edges", 201],
  ["getUsersEdge", "GET", "/auth/users/{user_uuid}/edges/{edge_uuid}", 200],
  ["updateUsersEdge", "PATCH", "/auth/users/{user_uuid}/edges/{edge_uuid}", 200],
  ["deleteUsersEdge", "DELETE", "/auth/users/{user_uuid}/edges/{edge_uuid}", 204],
  ["listMyEdges", "GET", "/auth/users/me/edges", 200],
  ["createMyEdge", "POST", "/auth/users/me/edges", 201],
  ["createMyEdgeWithUUID", "PUT", "/auth/users/me/edges/{edge_uuid}", 201],
  ["getMyEdge", "GET", "/auth/users/me/edges/{edge_uuid}", 200],
  ["updateMyEdge", "PATCH", "/auth/users/me/edges/{edge_uuid}", 200],
  ["deleteMyEdge", "DELETE", "/auth/users/me/edges/{edge_uuid}", 204],
  ["createEdgeSecret", "POST", "/auth/edges/{edge_uuid}/secrets", 201],
  ["createMyEdgeSecret", "POST", "/auth/users/me/edges/{edge_uuid}/secrets", 201],
  ["listMyGroups", "GET", "/auth/users/me/groups", 200],
  ["listGroups", "GET", "/auth/groups", 200],
  ["createGroup", "POST", "/auth/groups", 201],
  ["getGroup", "GET", "/auth/groups/{group_uuid}", 200],
  ["updateGroup", "PATCH", "/auth/groups/{group_uuid}", 200],
  ["deleteGroup", "DELETE", "/auth/groups/{group_uuid}", 204],
  ["listSubGroup", "GET", "/auth/groups/{group_uuid}/groups", 200],
  ["createSubGroup", "POST", "/auth/groups/{group_uuid}/groups", 201],
  ["listGroupMembers", "GET", "/auth/groups/{group_uuid}/members", 200],
  ["addGroupMember", "POST", "/auth/groups/{group_uuid}/members", 200],
  ["getGroupMember", "GET", "/auth/groups/{group_uuid}/members/{user_uuid}", 200],
  ["updateGroupMember", "PATCH", "/auth/groups/{group_uuid}/members/{user_uuid}", 200],
  ["removeGroupMember", "DELETE", "/auth/groups/{group_uuid}/members/{user_uuid}", 204],
  ["addGroupOwnerAttribute", "PUT", "/auth/groups/{group_uuid}/members/{user_uuid}/owner", 200],
  ["removeGroupOwnerAttribute", "DELETE", "/auth/groups/{group_uuid}/members/{user_uuid}/owner", 204],
  ["listMyProjects", "GET", "/auth/users/me/projects", 200],
  ["listGroupProjects", "GET", "/auth/groups/{group_uuid}/projects", 200],
  ["createProject", "POST", "/auth/groups/{group_uuid}/projects", 201],
  ["listProjects", "GET", "/auth/projects", 200],
  ["getProject", "GET", "/auth/projects/{project_uuid}", 200],
  ["updateProject", "PATCH", "/auth/projects/{project_uuid}", 200],
  ["deleteProject", "DELETE", "/auth/projects/{project_uuid}", 204],
  ["listProjectMembers", "GET", "/auth/projects/{project_uuid}/members", 200],
  ["addProjectMember", "POST", "/auth/projects/{project_uuid}/members", 200],
  ["getProjectMember", "GET", "/auth/projects/{project_uuid}/members/{user_uuid}", 200],
  ["updateProjectMember", "PATCH", "/auth/projects/{project_uuid}/members/{user_uuid}", 200],
  ["removeProjectMember", "DELETE", "/auth/projects/{project_uuid}/members/{user_uuid}", 204],
  ["addProjectOwnerAttribute", "PUT", "/auth/projects/{project_uuid}/members/{user_uuid}/owner", 200],
  ["removeProjectOwnerAttribute", "DELETE", "/auth/projects/{project_uuid}/members/{user_uuid}/owner", 204],
  ["listProjectEdges", "GET", "/auth/projects/{project_uuid}/edges", 200],
  ["addProjectEdges", "POST", "/auth/projects/{project_uuid}/edges", 200],
  ["getProjectEdge", "GET", "/auth/projects/{project_uuid}/edges/{edge_uuid}", 200],
  ["updateProjectEdge", "PATCH", "/auth/projects/{project_uuid}/edges/{edge_uuid}", 200],
  ["removeProjectEdge", "DELETE", "/auth/projects/{project_uuid}/edges/{edge_uuid}", 204],
];

describe("organisation operations in the OpenAPI document", () => {
  let peer: TestPeer;
  let doc: any;
  beforeAll(async () => {
    peer = await startTestPeer();
    doc = await (await peer.api("/openapi.json")).json();
  });
  afterAll(async () => {
    await peer?.stop();
  });

  it.each(OPS)("%s is %s %s answering %i", (operationId, method, path, success) => {
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op, `${method} ${path}`).toBeDefined();
    expect(op.operationId).toBe(operationId);
    expect(Object.keys(op.responses)).toContain(String(success));
  });

  it("never answers malformed input with a 500 (as a super user, past the guard)", async () => {
    const { adminToken, caller } = await import("./helpers.js");
    const admin = caller(peer, await adminToken(peer));
    const group = (await admin("/auth/groups", { method: "POST", json: { name: "fuzz" } })).body.uuid;
    const project = (await admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "fuzz" } })).body
      .uuid;
    const ids: Record<string, string> = {
      group_uuid: group,
      project_uuid: project,
      edge_uuid: "0f8fad5b-d9cb-469f-a165-70867728950e",
      user_uuid: "0f8fad5b-d9cb-469f-a165-70867728950e",
    };
    const bodies: unknown[] = [
      null,
      [],
      42,
      "text",
      { name: 1, role_uuids: "x", user_uuid: {}, scopes: [1], path: 5, method: "get" },
      { name: "n".repeat(70000) },
      { role_uuids: Array(500).fill("r") },
    ];
    for (const [, method, path] of OPS) {
      for (const p of [
        path.replace(/\{(\w+)\}/g, (_, k: string) => ids[k]!),
        path.replace(/\{(\w+)\}/g, "%00not-a-uuid"),
      ]) {
        for (const body of method === "GET" || method === "DELETE" ? [undefined] : bodies) {
          const r = await admin(p + "?page=0&per_page=abc&sort=%00&is_owner=maybe&since_created_at=x&uuid[]=1", {
            method,
            json: body,
          });
          expect(
            r.status,
            `${method} ${p} ${JSON.stringify(body)?.slice(0, 40)} -> ${JSON.stringify(r.body)}`,
          ).toBeLessThan(500);
        }
      }
    }
  });

  it("needs authentication for every one of them", async () => {
    for (const [, method, path] of OPS) {
      const p = path.replace(/\{[^}]+\}/g, "0f8fad5b-d9cb-469f-a165-70867728950e");
      const res = await peer.api(p, { method, json: method === "GET" || method === "DELETE" ? undefined : {} });
      expect(res.status, `${method} ${p}`).toBe(401);
      expect(await res.json()).toMatchObject({ type: "unauthorized" });
    }
  });
});
