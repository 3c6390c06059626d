// Who may connect to the broker in the cloud peer, and as which node: a user's API token as the iSCP token (with
// that user's rights, refused once deleted), node IDs bound for users as for edges, a member's measurement naming
// an edge outside the project, and an edge that belongs to no project.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { IscpRequestError } from "../../../runtime/iscp/request-error.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { ResultCode } from "../../../proto/wire/message.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  adminToken,
  caller,
  edgeToken,
  json,
  makeEdge,
  makeUser,
  MEMBER,
  READ_ONLY,
  type Call,
  type TestEdge,
  type TestUser,
} from "../org/helpers.js";

const NIL = "00000000-0000-0000-0000-000000000000";
let peer: TestPeer;
let admin: Call;
let project: string;
let member: TestUser;
let reader: TestUser;
let projectEdge: TestEdge;
const clients: IscpClient[] = [];

const connect = async (token: string, nodeId: string, projectUuid = project) => {
  const c = await IscpClient.connect({
    transport: () => connectWebSocket({ url: `${peer.url.replace("http", "ws")}/api/iscp/connect` }),
    token,
    nodeId,
    projectUuid,
    reconnect: false,
  });
  clients.push(c);
  return c;
};
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => "accepted",
    (e: unknown) => (e instanceof IscpRequestError ? e.resultCode : String(e)),
  );
const all = [{ name: "#", type: "#" }];

beforeAll(async () => {
  peer = await startTestPeer();
  admin = caller(peer, await adminToken(peer));
  const group = (await json(admin("/auth/groups", { method: "POST", json: { name: "identity-group" } }), 201)).uuid;
  project = (
    await json(admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "identity-project" } }), 201)
  ).uuid;
  member = await makeUser(peer, admin, "identity-member");
  reader = await makeUser(peer, admin, "identity-reader", [READ_ONLY]);
  await json(
    admin(`/auth/projects/${project}/members`, {
      method: "POST",
      json: { user_uuid: member.uuid, role_uuids: [MEMBER] },
    }),
    200,
  );
  await json(
    admin(`/auth/projects/${project}/members`, {
      method: "POST",
      json: { user_uuid: reader.uuid, role_uuids: [READ_ONLY] },
    }),
    200,
  );
  projectEdge = await makeEdge(admin, "identity-edge");
  await json(admin(`/auth/projects/${project}/edges`, { method: "POST", json: { edge_name: projectEdge.name } }), 200);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await peer?.stop();
});

describe("a user's API token as the iSCP access token", () => {
  it("connects with exactly the rights of its user in the project", async () => {
    const writer = await connect(member.token, member.uuid);
    await expect(writer.openUpstream({ sessionId: randomUUID() })).resolves.toBeDefined();
    const viewer = await connect(reader.token, reader.uuid);
    await expect(
      viewer.openDownstream({ filters: [{ sourceNodeId: member.uuid, dataFilters: all }] }),
    ).resolves.toBeDefined();
    expect(await refusal(viewer.openUpstream({ sessionId: randomUUID() }))).toBe(ResultCode.AUTH_FAILED);
    // Not a member of that project: refused at connect.
    const elsewhere = (await json(admin("/auth/groups", { method: "POST", json: { name: "identity-other" } }), 201))
      .uuid;
    const other = (
      await json(
        admin(`/auth/groups/${elsewhere}/projects`, { method: "POST", json: { name: "identity-other-p" } }),
        201,
      )
    ).uuid;
    expect(await refusal(connect(member.token, member.uuid, other))).toBe(ResultCode.AUTH_FAILED);
  });

  it("is refused once the token is deleted", async () => {
    const made = await json(
      member.call("/auth/users/me/tokens", { method: "POST", json: { name: "iscp-token" } }),
      201,
    );
    await connect(made.token, member.uuid);
    expect((await member.call(`/auth/users/me/tokens/${made.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await refusal(connect(made.token, member.uuid))).toBe(ResultCode.AUTH_FAILED);
  });
});

describe("node IDs of users", () => {
  it("a member cannot connect as an edge of the project or as another user (NODE_ID_MISMATCH)", async () => {
    expect(await refusal(connect(member.token, projectEdge.uuid))).toBe(ResultCode.NODE_ID_MISMATCH);
    expect(await refusal(connect(member.token, projectEdge.uuid.toUpperCase()))).toBe(ResultCode.NODE_ID_MISMATCH);
    expect(await refusal(connect(member.token, reader.uuid))).toBe(ResultCode.NODE_ID_MISMATCH);
  });

  it("E2E calls to the edge reach the edge only", async () => {
    const edge = await connect((await edgeToken(peer, projectEdge)).body.access_token, projectEdge.uuid);
    const calls: string[] = [];
    edge.onCall((c) => calls.push(c.name));
    expect(await refusal(connect(member.token, projectEdge.uuid))).toBe(ResultCode.NODE_ID_MISMATCH);
    const caller = await connect(member.token, member.uuid);
    caller.send({
      upstreamCall: {
        callId: randomUUID(),
        destinationNodeId: projectEdge.uuid,
        name: "ping",
        type: "t",
        payload: new Uint8Array([1]),
      },
    });
    await expect.poll(() => calls, { timeout: 30_000 }).toEqual(["ping"]);
  });

  it("a user may connect as itself, without a node ID, with one that names nobody, or as an edge it owns", async () => {
    const own = await makeEdge(member.call, "identity-owned", "/auth/users/me/edges");
    for (const nodeId of [member.uuid, "", "viewer-1", own.uuid])
      expect(await refusal(connect(member.token, nodeId)), nodeId).toBe("accepted");
  });
});

describe("measurements naming an edge", () => {
  const create = (edge: string) =>
    member.call(`/v1/projects/${project}/measurements`, {
      method: "POST",
      json: { basetime: "2026-01-01T00:00:00Z", basetime_type: "ntp", edge_uuid: edge },
    });

  it("a member may name an edge of the project, not one outside it", async () => {
    expect((await create(projectEdge.uuid)).status).toBe(201);
    const outside = await makeEdge(admin, "identity-outside");
    const refused = await create(outside.uuid);
    expect([refused.status, refused.body.title]).toEqual([400, "edge_uuid names an edge outside this project"]);
  });
});

describe("an edge that belongs to no project", () => {
  it("works in the default project of the legacy API: its upstream is stored there and relayed there", async () => {
    const loner = await makeEdge(admin, "identity-loner");
    const token = (await edgeToken(peer, loner)).body.access_token as string;
    expect(await refusal(connect(token, loner.uuid, project))).toBe(ResultCode.AUTH_FAILED);
    const viewer = await connect(member.token, member.uuid, NIL);
    const got: number[] = [];
    (await viewer.openDownstream({ filters: [{ sourceNodeId: loner.uuid, dataFilters: all }] })).onChunk((c) =>
      got.push(c.sequenceNumber),
    );
    const edge = await connect(token, loner.uuid, NIL);
    const session = randomUUID();
    await edge.sendBaseTime(
      {
        sessionId: session,
        name: "edge_rtc",
        priority: 20,
        elapsedTime: 0n,
        baseTime: BigInt(Date.now()) * 1_000_000n,
      },
      true,
    );
    const up = await edge.openUpstream({ sessionId: session, persist: true });
    up.write({ name: "v", type: "u8" }, [{ elapsedTime: 1n, payload: new Uint8Array([1]) }]);
    up.flush();
    expect(await up.waitAcked(5000)).toBe(true);
    await expect.poll(() => got.length, { timeout: 30_000 }).toBe(1);
    await up.close({ closeSession: true });
    await peer.svc.measurements.upstream.drain();
    const m = await json(admin(`/v1/measurements/${session}`), 200);
    expect(m.edge_uuid).toBe(loner.uuid);
  });
});
