// Refusal paths not covered by the per-area tests, each with its exact body: unknown groups,
// projects, members, edges and secrets (404), and renames onto a taken name (409).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminToken, caller, json, makeEdge, makeUser, type Call } from "./helpers.js";

const GHOST = "00000000-0000-4000-8000-0000000000ff";
const nf = (title: string) => ({ status: 404, body: { type: "not_found", title } });

describe("refusals with exact bodies", () => {
  let peer: TestPeer;
  let admin: Call;
  const ids: Record<string, string> = { X: GHOST };
  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    ids.U = (await makeUser(peer, admin, "rita")).uuid;
    ids.G = (await json(admin("/auth/groups", { method: "POST", json: { name: "ref-g" } }), 201)).uuid;
    await json(admin("/auth/groups", { method: "POST", json: { name: "ref-taken" } }), 201);
    ids.P = (
      await json(admin(`/auth/groups/${ids.G}/projects`, { method: "POST", json: { name: "ref-p" } }), 201)
    ).uuid;
    await json(admin(`/auth/groups/${ids.G}/projects`, { method: "POST", json: { name: "ref-taken" } }), 201);
    ids.E = (await makeEdge(admin, "ref-e")).uuid;
  });
  afterAll(async () => {
    await peer?.stop();
  });

  const rows: Array<[string, string, unknown, { status: number; body: unknown }]> = [
    [
      "PATCH",
      "/auth/groups/{G}",
      { name: "ref-taken" },
      {
        status: 409,
        body: {
          type: "conflict",
          title: "a group with this name already exists here",
          properties: { name: "already exists" },
        },
      },
    ],
    [
      "PATCH",
      "/auth/projects/{P}",
      { name: "ref-taken" },
      {
        status: 409,
        body: {
          type: "conflict",
          title: "a project with this name already exists here",
          properties: { name: "already exists" },
        },
      },
    ],
    ["PATCH", "/auth/groups/{X}", { name: "n" }, nf("group not found")],
    ["DELETE", "/auth/groups/{X}", undefined, nf("group not found")],
    ["GET", "/auth/groups/{X}/groups", undefined, nf("group not found")],
    ["POST", "/auth/groups/{X}/groups", { name: "n" }, nf("group not found")],
    ["GET", "/auth/groups/{X}/projects", undefined, nf("group not found")],
    ["GET", "/auth/groups/{X}/members", undefined, nf("group not found")],
    ["POST", "/auth/groups/{X}/members", { user_uuid: "{U}", role_uuids: [] }, nf("group not found")],
    ["PATCH", "/auth/groups/{G}/members/{U}", { role_uuids: [] }, nf("member not found")],
    ["DELETE", "/auth/groups/{G}/members/{U}", undefined, nf("member not found")],
    ["PUT", "/auth/groups/{G}/members/{U}/owner", undefined, nf("member not found")],
    ["DELETE", "/auth/groups/{G}/members/{U}/owner", undefined, nf("member not found")],
    ["PATCH", "/auth/projects/{X}", { name: "n" }, nf("project not found")],
    ["DELETE", "/auth/projects/{X}", undefined, nf("project not found")],
    ["GET", "/auth/projects/{X}/members", undefined, nf("project not found")],
    ["GET", "/auth/projects/{P}/members/{U}", undefined, nf("member not found")],
    ["PATCH", "/auth/projects/{P}/members/{U}", { role_uuids: [] }, nf("member not found")],
    ["DELETE", "/auth/projects/{P}/members/{U}", undefined, nf("member not found")],
    ["PUT", "/auth/projects/{P}/members/{U}/owner", undefined, nf("member not found")],
    ["GET", "/auth/projects/{X}/edges", undefined, nf("project not found")],
    ["POST", "/auth/projects/{X}/edges", { edge_name: "ref-e" }, nf("project not found")],
    ["PATCH", "/auth/projects/{P}/edges/{E}", { nickname: "n" }, nf("the edge is not in this project")],
    ["DELETE", "/auth/projects/{P}/edges/{E}", undefined, nf("the edge is not in this project")],
    ["PATCH", "/auth/edges/{X}", { nickname: "n" }, nf("edge not found")],
    ["POST", "/auth/edges/{X}/owner", { user_uuid: "{U}" }, nf("edge not found")],
    ["DELETE", "/auth/edges/{X}/owner", undefined, nf("edge not found")],
    ["PATCH", "/auth/users/{U}/edges/{E}", { nickname: "n" }, nf("edge not found")], // not rita's
    ["DELETE", "/auth/users/{U}/edges/{E}", undefined, nf("edge not found")],
    ["PATCH", "/auth/users/me/edges/{E}", { nickname: "n" }, nf("edge not found")], // not the admin's
    ["POST", "/auth/edges/{X}/secrets", { name: "n" }, nf("edge not found")],
    ["GET", "/auth/edges/{X}/secrets", undefined, nf("edge not found")],
    ["GET", "/auth/users/me/edges/{E}/secrets", undefined, nf("edge not found")],
    ["DELETE", "/auth/users/me/edges/{E}/secrets/1", undefined, nf("edge not found")],
  ];
  const fill = (s: string) => s.replace(/\{(\w)\}/g, (_, k: string) => ids[k]!);

  it.each(rows)("%s %s", async (method, path, body, expected) => {
    const json = body === undefined ? undefined : JSON.parse(fill(JSON.stringify(body)));
    const r = await admin(fill(path), { method, json });
    expect({ status: r.status, body: r.body }).toEqual(expected);
  });

  it("stores edge client secrets only as SHA-256 digests", async () => {
    const e = await json(admin("/auth/edges", { method: "POST", json: { name: "ref-hashed" } }), 201);
    const extra = await json(admin(`/auth/edges/${e.uuid}/secrets`, { method: "POST", json: { name: "extra" } }), 201);
    const rows = await peer.svc.db.all<Record<string, unknown>>("SELECT * FROM edge_secrets WHERE edge_uuid = ?", [
      e.uuid,
    ]);
    expect(rows).toHaveLength(2);
    const crypto = await import("node:crypto");
    const sha = (s: string) => crypto.createHash("sha256").update(s).digest("hex");
    expect(rows.map((r) => r.digest).sort()).toEqual([sha(e.client_secret), sha(extra.secret)].sort());
    for (const r of rows)
      for (const secret of [e.client_secret, extra.secret]) expect(JSON.stringify(r)).not.toContain(secret);
  });
});
