// Health probes of a real cloud peer: public, cheap, and naming what is not ready.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INLINE_MAX } from "../../../cloud/measurements/storage/payload-files.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import {
  adminCall,
  chunksMessage,
  createMeasurement,
  P,
  randomPoints,
  uploadProto,
  uuid,
  type Call,
} from "../measurements/helpers.js";

let peer: TestPeer;
let call: Call;

beforeAll(async () => {
  peer = await startTestPeer();
  call = await adminCall(peer);
});
afterAll(async () => {
  await peer?.stop();
});

const probe = async (which: "alive" | "ready") => {
  const r = await fetch(`${peer.url}/api/health/${which}`);
  return { status: r.status, body: (await r.json()) as any };
};

describe("health probes", () => {
  it("answers alive and ready without credentials, listed in the OpenAPI document as public", async () => {
    expect(await probe("alive")).toEqual({ status: 200, body: { status: "alive" } });
    expect(await probe("ready")).toEqual({
      status: 200,
      body: { status: "ready", checks: { database: "ok", broker: "ok", storage: "ok", cluster: "ok" } },
    });
    const doc = (await (await fetch(`${peer.url}/api/openapi.json`)).json()) as any;
    expect(doc.paths["/health/alive"].get).toMatchObject({ operationId: "getHealthAlive", security: [] });
    expect(doc.paths["/health/ready"].get).toMatchObject({ operationId: "getHealthReady", security: [] });
    expect(Object.keys(doc.paths["/health/ready"].get.responses)).toContain("503");
  });

  it("reports storage as not ready after a write failed for lack of space, and ready again once a write stores", async () => {
    const m = await createMeasurement(call);
    const seq = uuid();
    // A payload too large for its row goes to the sequence's payload file: made a full disk here.
    expect(
      (await call(`${P}/measurements/${m.uuid}/sequences/${seq}`, { method: "PUT", json: { expected_data_points: 1 } }))
        .status,
    ).toBe(200);
    const { id } = (await peer.svc.db.get<{ id: number }>("SELECT id FROM meas_sequences WHERE measurement_uuid = ?", [
      m.uuid,
    ]))!;
    const file = path.join(peer.dataDir, "chunks", `${id}.chunks`);
    fs.symlinkSync("/dev/full", file);
    const pts = randomPoints(1, ["1/a"], 3).map((p) => ({ ...p, payload: Buffer.alloc(INLINE_MAX + 1, 7) }));
    expect((await uploadProto(call, chunksMessage(m.uuid, seq, [pts]))).status).toBe(507);

    const full = await probe("ready");
    expect(full.status).toBe(503);
    expect(full.body.type).toBe("insufficient_storage");
    expect(full.body.title).toMatch(/^not ready: storage: storage is full/);
    expect(full.body.properties).toEqual({ storage: expect.stringMatching(/lack of space/) });
    expect((await probe("alive")).status).toBe(200);

    fs.unlinkSync(file);
    expect((await uploadProto(call, chunksMessage(m.uuid, seq, [pts]))).status).toBe(200);
    expect((await probe("ready")).status).toBe(200);
  });

  it("can be polled every second: a hundred probes in a row all answer ready", async () => {
    // How fast they answer is a benchmark's question, not a test's (the suite runs on busy machines too).
    for (let i = 0; i < 100; i++) expect((await probe("ready")).status).toBe(200);
  });

  it("reports the broker as not ready once it stops accepting connections", async () => {
    const other = await startTestPeer();
    try {
      await other.svc.iscp.broker.close();
      const r = await fetch(`${other.url}/api/health/ready`);
      expect(r.status).toBe(503);
      const body = (await r.json()) as any;
      expect(body).toMatchObject({
        type: "service_unavailable",
        properties: { broker: "the iSCP broker is shutting down" },
      });
      expect(body.title).toBe("not ready: broker: the iSCP broker is shutting down");
    } finally {
      await other.stop();
    }
  });
});
