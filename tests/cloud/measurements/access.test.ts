// Project-scoped measurement paths are decided by the organisation's access engine (project
// membership and scopes); these checks make sure the measurement routes are guarded by it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { bearer, edgeToken, json, makeEdge, makeUser, READ_ONLY } from "../org/helpers.js";
import {
  adminCall,
  chunksMessage,
  createMeasurement,
  expectError,
  ndjson,
  randomPoints,
  uploadProto,
  uuid,
  type Call,
} from "./helpers.js";

describe("measurements: access by project", () => {
  let peer: TestPeer;
  let admin: Call;
  let project: string;
  let edge: Call;
  let edgeUuid: string;
  let bob: Call;
  let dave: Call;

  beforeAll(async () => {
    peer = await startTestPeer();
    admin = await adminCall(peer);
    const group = (await json(admin("/auth/groups", { method: "POST", json: { name: "G" } }), 201)).uuid;
    project = (await json(admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "P" } }), 201)).uuid;
    const e = await makeEdge(admin, "E1");
    edgeUuid = e.uuid;
    await json(
      admin(`/auth/projects/${project}/edges`, { method: "POST", json: { edge_name: "E1", nickname: "first" } }),
      200,
    );
    edge = bearer(peer, (await edgeToken(peer, e)).body.access_token);
    const b = await makeUser(peer, admin, "bob");
    await json(
      admin(`/auth/projects/${project}/members`, {
        method: "POST",
        json: { user_uuid: b.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    bob = b.call;
    dave = (await makeUser(peer, admin, "dave")).call;
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("lets an edge of the project create a measurement, upload chunks and read data; members read; others are refused", async () => {
    const P = `/v1/projects/${project}`;
    const m = await createMeasurement(edge, { edge_uuid: edgeUuid }, `${P}/measurements`);
    const up = await uploadProto(
      edge,
      chunksMessage(m.uuid, uuid(), [randomPoints(3)]),
      `${P}/measurements/sequences/chunks`,
    );
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const data = await edge(`${P}/data?name=${m.uuid}`);
    expect(data.status).toBe(200);
    expect(ndjson(typeof data.body === "string" ? data.body : JSON.stringify(data.body) + "\n")).toHaveLength(3);

    // `name` may also be the edge's UUID or its name.
    for (const name of [edgeUuid, "E1"]) {
      const byEdge = await edge(`${P}/data?name=${name}`);
      expect(byEdge.status).toBe(200);
      expect(String(byEdge.body).trim().split("\n")).toHaveLength(3);
    }

    expect((await bob(`${P}/measurements/${m.uuid}`)).status).toBe(200);
    expectError(
      await bob(`${P}/measurements`, {
        method: "POST",
        json: { basetime: "2026-01-01T00:00:00Z", basetime_type: "ntp", edge_uuid: edgeUuid },
      }),
      403,
      "forbidden",
    );
    expectError(await dave(`${P}/measurements/${m.uuid}`), 403, "forbidden");
    expectError(await dave(`${P}/data?name=${m.uuid}`), 403, "forbidden");
    // The measurement is not visible through another project (nor the default one).
    expectError(await admin(`/v1/measurements/${m.uuid}`), 404, "not_found");
  });

  it("answers 404 for a project that does not exist", async () => {
    expectError(await admin(`/v1/projects/${uuid()}/measurements`), 404, "not_found");
  });
});
