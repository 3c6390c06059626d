// The broker inside the real cloud peer: edges authenticate with their own client_credentials
// tokens, tickets work once, and persisted upstream data comes back through the REST data API.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { IscpRequestError } from "../../../runtime/iscp/request-error.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { loadConfig } from "../../../cloud/config.js";
import { ResultCode } from "../../../proto/wire/message.js";
import { adminToken, caller, type Call } from "../accounts/helpers.js";
import { edgeToken, json, makeEdge, makeUser, READ_ONLY, type TestEdge } from "../org/helpers.js";
import {
  adminToken as oauthAdminToken,
  createUser as createOauthUser,
  MEMBER_ROLE,
  passwordToken,
} from "../oauth/helpers.js";

const PROJECT = "00000000-0000-0000-0000-000000000000";

describe("iSCP broker in the cloud peer", () => {
  let peer: TestPeer;
  let admin: Call;
  let edge: TestEdge;
  let token: string;
  const clients: IscpClient[] = [];

  const connect = async (tok: string, nodeId: string, projectUuid = PROJECT) => {
    const c = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${peer.url.replace("http", "ws")}/api/iscp/connect` }),
      token: tok,
      nodeId,
      projectUuid,
      reconnect: false,
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    peer = await startTestPeer();
    admin = caller(peer, await adminToken(peer));
    edge = await makeEdge(admin, "broker-edge");
    const t = await edgeToken(peer, edge);
    expect(t.status).toBe(200);
    token = t.body.access_token;
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await peer.stop();
  });

  it("accepts an edge with its own token and node id", async () => {
    const c = await connect(token, edge.uuid);
    expect(c.state).toBe("open");
  });

  it("refuses a bad token with AUTH_FAILED", async () => {
    const err = await connect("not-a-token", edge.uuid).catch((e) => e);
    expect(err).toBeInstanceOf(IscpRequestError);
    expect((err as IscpRequestError).resultCode).toBe(66);
  });

  it("refuses an edge that claims another node id with NODE_ID_MISMATCH", async () => {
    const err = await connect(token, randomUUID()).catch((e) => e);
    expect((err as IscpRequestError).resultCode).toBe(128);
  });

  it("judges a user's older access token by the roles the user holds now", async () => {
    const adminBearer = await oauthAdminToken(peer);
    const user = await createOauthUser(peer, adminBearer);
    const older = (await passwordToken(peer, user.name, user.password)).access_token as string;
    const streams = async () => {
      const c = await connect(older, randomUUID());
      return c.openUpstream({ sessionId: randomUUID() }).then(
        () => "opened",
        (e: unknown) => (e as IscpRequestError).resultCode,
      );
    };
    expect(await streams()).toBe("opened");
    expect((await admin(`/auth/users/${user.uuid}/roles/${MEMBER_ROLE}`, { method: "DELETE" })).status).toBe(204);
    await new Promise((r) => setTimeout(r, 1100)); // the user's standing is cached for one second
    const refused = await streams().catch((e: unknown) => (e as IscpRequestError).resultCode);
    expect(refused).not.toBe("opened");
  });

  it("lets in only subjects of the project, with the message types their roles allow", async () => {
    const group = (await json(admin("/auth/groups", { method: "POST", json: { name: "iscp-group" } }), 201)).uuid;
    const project = (
      await json(admin(`/auth/groups/${group}/projects`, { method: "POST", json: { name: "iscp-project" } }), 201)
    ).uuid;
    // A read-only member may receive (downstream, downstream_call) but not send.
    const vic = await makeUser(peer, admin, "iscp-vic", [READ_ONLY]);
    await json(
      admin(`/auth/projects/${project}/members`, {
        method: "POST",
        json: { user_uuid: vic.uuid, role_uuids: [READ_ONLY] },
      }),
      200,
    );
    const ticket = (await json(vic.call("/iscp/tickets", { method: "POST" }), 201)).ticket;
    const reader = await connect(ticket, randomUUID(), project);
    await expect(
      reader.openDownstream({ filters: [{ sourceNodeId: edge.uuid, dataFilters: [{ name: "#", type: "#" }] }] }),
    ).resolves.toBeDefined();
    const refused = await reader.openUpstream({ sessionId: randomUUID() }).catch((e: unknown) => e);
    expect((refused as IscpRequestError).resultCode).toBe(66);
    const meta = await reader
      .sendBaseTime({ sessionId: randomUUID(), name: "edge_rtc", priority: 20, elapsedTime: 0n, baseTime: 1n })
      .catch((e: unknown) => e);
    expect((meta as IscpRequestError).resultCode).toBe(66);
    // An edge that is not in the project is refused at connect; in the default project it is let in.
    const outsider = await connect(token, edge.uuid, project).catch((e: unknown) => e);
    expect((outsider as IscpRequestError).resultCode).toBe(66);
    // A project UUID that names no project is refused too.
    const nowhere = await connect(token, edge.uuid, randomUUID()).catch((e: unknown) => e);
    expect((nowhere as IscpRequestError).resultCode).toBe(66);
  });

  it("documents GET /iscp/connect (connectISCPV2, 101) and answers a GET without upgrade with 400", async () => {
    const doc = (await admin("/openapi.json")).body;
    const op = doc.paths["/iscp/connect"].get;
    expect(op.operationId).toBe("connectISCPV2");
    expect(Object.keys(op.responses)).toContain("101");
    const res = await fetch(`${peer.url}/api/iscp/connect?enc=proto`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: "invalid_request" });
  });

  it("takes its limits from CLOUD_ISCP_LIMITS and refuses a bad one at start", async () => {
    const limited = await startTestPeer({ config: { iscpLimits: "maxUpstreamsPerConn=1, expiryGraceFloorSec=0" } });
    try {
      const e = await makeEdge(caller(limited, await adminToken(limited)), "limited-edge");
      const t = (await edgeToken(limited, e)).body.access_token as string;
      const c = await IscpClient.connect({
        transport: () => connectWebSocket({ url: `${limited.url.replace("http", "ws")}/api/iscp/connect` }),
        token: t,
        nodeId: e.uuid,
        projectUuid: PROJECT,
        reconnect: false,
      });
      clients.push(c);
      await c.openUpstream({ sessionId: randomUUID() });
      const second = await c.openUpstream({ sessionId: randomUUID() }).catch((err: unknown) => err);
      expect((second as IscpRequestError).resultCode).toBe(ResultCode.TOO_MANY_STREAMS);
    } finally {
      await limited.stop();
    }
    expect(() => loadConfig({ iscpLimits: "maxUpstreams=1" }, {})).toThrow(/unknown limit "maxUpstreams"/);
    expect(() => loadConfig({}, { CLOUD_ISCP_LIMITS: "maxUpstreamsPerConn=0" })).toThrow(/expected an integer >= 1/);
    expect(() => loadConfig({}, { CLOUD_ISCP_LIMITS: "maxUpstreamsPerConn" })).toThrow(/needs name=value/);
  });

  it("issues one-time tickets usable as the access token exactly once", async () => {
    const res = await admin("/iscp/tickets", { method: "POST" });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["created_at", "expired_at", "ticket"]);
    const c = await connect(res.body.ticket, "");
    expect(c.state).toBe("open");
    const again = await connect(res.body.ticket, "").catch((e) => e);
    expect((again as IscpRequestError).resultCode).toBe(66);
  });

  it("stores a persisted upstream and serves it back through the data API", async () => {
    const c = await connect(token, edge.uuid);
    const session = randomUUID();
    const baseNs = BigInt(Date.now()) * 1_000_000n;
    await c.sendBaseTime(
      { sessionId: session, name: "edge_rtc", priority: 20, elapsedTime: 0n, baseTime: baseNs },
      true,
    );
    const up = await c.openUpstream({ sessionId: session, persist: true });
    const payloads = [Buffer.from("alpha"), Buffer.from("beta"), Buffer.from([0, 1, 2, 255])];
    up.write(
      { name: "sensor/a", type: "bytes" },
      payloads.map((p, i) => ({ elapsedTime: BigInt(i) * 1_000_000n, payload: p })),
    );
    up.flush();
    expect(await up.waitAcked(5000)).toBe(true);
    await up.close({ closeSession: true });
    await peer.svc.measurements.upstream.drain();
    const res = await admin(`/v1/projects/${PROJECT}/data?name=${session}&time_format=ns`);
    expect(res.status).toBe(200);
    const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body) + "\n";
    const points = text
      .trim()
      .split("\n")
      .map((l: string) => JSON.parse(l));
    expect(points.map((p: any) => p.data_id)).toEqual(["sensor/a", "sensor/a", "sensor/a"]);
    expect(points.map((p: any) => Buffer.from(p.data.d, "base64"))).toEqual(payloads);
    // Nanosecond times exceed 2^53: read them from the text, not through JSON.parse.
    const times = [...text.matchAll(/"time":(\d+)/g)].map((m) => BigInt(m[1]!) - baseNs);
    expect(times).toEqual([0n, 1_000_000n, 2_000_000n]);
  });
});
