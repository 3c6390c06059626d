import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestPeer } from "../harness.js";
import {
  BASETIME,
  P,
  chunksMessage,
  createMeasurement,
  expectError,
  randomPoints,
  startPeerWithAdmin,
  uploadProto,
  uuid,
  type Call,
} from "./helpers.js";

describe("measurements: status transitions, sequences and base times", () => {
  let peer: TestPeer;
  let call: Call;
  beforeAll(async () => ({ peer, admin: call } = await startPeerWithAdmin()));
  afterAll(() => peer?.stop());

  const status = async (m: string) => (await call(`${P}/measurements/${m}`)).body;

  it("moves ready -> measuring -> resending -> completed as data arrives and expectations are met", async () => {
    const m = (await createMeasurement(call)).uuid;
    expect((await status(m)).sequences.status).toBe("ready");
    const seq = uuid();
    const pts = randomPoints(10, ["1/a"], 5);
    const chunks = [pts.slice(0, 4), pts.slice(4, 7), pts.slice(7)];
    // Chunks 1 and 3 arrive live; 2 is lost.
    const live = chunksMessage(m, seq, [chunks[0]!]);
    await uploadProto(call, live);
    await uploadProto(call, chunksMessage(m, seq, [chunks[2]!], 3));
    let s = await status(m);
    expect(s.sequences.status).toBe("measuring");
    expect(s.status).toBe("measuring");
    expect(s.max_elapsed_time).toBeGreaterThan(0);

    // The edge tells what it sent, then ends the measurement.
    const patch = await call(`${P}/measurements/${m}/sequences/${seq}`, {
      method: "PATCH",
      json: { expected_data_points: 10, final_sequence_number: 3 },
    });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({
      uuid: seq,
      expected_data_points: 10,
      final_sequence_number: 3,
      received_data_points: 7,
      received_chunks_count: 2,
    });
    const end = await call(`${P}/measurements/${m}/end`, { method: "PUT" });
    expect(end.body).toEqual({ status: "resending" });
    s = await status(m);
    expect(s).toMatchObject({
      ended: true,
      completed: false,
      status: "resending",
      sequences: { status: "resending", expected_data_points: 10, received_data_points: 7 },
    });
    expect(s.sequences.received_chunks_ratio).toBeCloseTo(2 / 3);

    // The deferred upload brings chunk 2: everything is there, the measurement completes by itself.
    const resent = await uploadProto(call, chunksMessage(m, seq, chunks, 1));
    expect(resent.body.items.map((i: any) => i.result)).toEqual(["skipped", "ok", "skipped"]);
    s = await status(m);
    expect(s).toMatchObject({
      ended: true,
      completed: true,
      status: "finished",
      sequences: { status: "completed", received_chunks_ratio: 1, received_data_points: 10 },
    });

    const listed = await call(`${P}/measurements?status[]=finished&uuid[]=${m}`);
    expect(listed.body.items.map((x: any) => x.uuid)).toEqual([m]);
    const notListed = await call(`${P}/measurements?status[]=resending&uuid[]=${m}`);
    expect(notListed.body.items).toEqual([]);
  });

  it("keeps an ended measurement resending while a sequence expects nothing it can check", async () => {
    const m = (await createMeasurement(call)).uuid;
    await uploadProto(call, chunksMessage(m, uuid(), [randomPoints(2)]));
    expect((await call(`${P}/measurements/${m}/end`, { method: "PUT" })).body).toEqual({ status: "resending" });
    expect((await call(`${P}/measurements?ended=true&uuid[]=${m}`)).body.items).toHaveLength(1);
    expect((await call(`${P}/measurements/${m}/complete`, { method: "PUT" })).body.sequences.status).toBe("completed");
  });

  it("lists, gets, puts (creating) and patches sequences; 404 for unknown ones", async () => {
    const m = (await createMeasurement(call)).uuid;
    const s1 = uuid();
    const put = await call(`${P}/measurements/${m}/sequences/${s1}`, {
      method: "PUT",
      json: { expected_data_points: 5, final_sequence_number: 2 },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      uuid: s1,
      expected_data_points: 5,
      final_sequence_number: 2,
      received_data_points: 0,
      received_chunks_count: 0,
    });
    // PUT replaces: an absent field is cleared.
    const replaced = await call(`${P}/measurements/${m}/sequences/${s1}`, {
      method: "PUT",
      json: { final_sequence_number: 4 },
    });
    expect(replaced.body.expected_data_points).toBeUndefined();
    expect(replaced.body.final_sequence_number).toBe(4);
    const patched = await call(`/v1/measurements/${m}/sequences/${s1}`, {
      method: "PATCH",
      json: { expected_data_points: 9 },
    });
    expect(patched.body).toMatchObject({ expected_data_points: 9, final_sequence_number: 4 });
    const list = await call(`${P}/measurements/${m}/sequences`);
    expect(list.body).toEqual({ items: [patched.body], page: { total_count: 1 } });
    expectError(await call(`${P}/measurements/${m}/sequences/${uuid()}`), 404, "not_found");
    expectError(
      await call(`${P}/measurements/${m}/sequences/${uuid()}`, { method: "PATCH", json: {} }),
      404,
      "not_found",
    );
    expectError(
      await call(`${P}/measurements/${m}/sequences/${s1}`, { method: "PUT", json: { expected_data_points: -1 } }),
      400,
      "invalid_request",
    );
  });

  it("manages base times by type and id; the highest priority is the measurement's base time", async () => {
    const m = (await createMeasurement(call)).uuid;
    const list = await call(`${P}/measurements/${m}/basetimes`);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toMatchObject({
      type: "edge_rtc",
      name: "edge_rtc",
      basetime: BASETIME,
      priority: 20,
      elapsed_time: 0,
    });

    const ntp = await call(`${P}/measurements/${m}/basetimes/ntp`, {
      method: "PUT",
      json: { basetime: "2026-01-02T03:04:06.5Z", priority: 40 },
    });
    expect(ntp.status, JSON.stringify(ntp.body)).toBe(200);
    expect(ntp.body).toMatchObject({
      type: "ntp",
      name: "ntp",
      priority: 40,
      basetime: "2026-01-02T03:04:06.500000000Z",
    });
    let meas = (await call(`${P}/measurements/${m}`)).body;
    expect(meas).toMatchObject({
      basetime_type: "ntp",
      basetime: "2026-01-02T03:04:06.500000000Z",
      max_priority_basetime_id: ntp.body.id,
    });

    // Deleting the base time in use hands the measurement to the highest-priority one left.
    expect((await call(`${P}/measurements/${m}/basetimes/ntp`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`${P}/measurements/${m}`)).body).toMatchObject({
      basetime_type: "edge_rtc",
      basetime: BASETIME,
      max_priority_basetime_id: list.body.items[0].id,
    });
    expect(
      (
        await call(`${P}/measurements/${m}/basetimes/ntp`, {
          method: "PUT",
          json: { basetime: "2026-01-02T03:04:06.5Z", priority: 40 },
        })
      ).status,
    ).toBe(200);

    const created = await call(`${P}/measurements/${m}/basetimes`, {
      method: "POST",
      json: { basetime: "2026-01-02T03:04:07Z", priority: 90, name: "manual", elapsed_time: 1000 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ type: "manual", name: "manual", priority: 90, elapsed_time: 1000 });
    expectError(
      await call(`${P}/measurements/${m}/basetimes`, {
        method: "POST",
        json: { basetime: "2026-01-02T03:04:07Z", priority: 1, name: "manual", elapsed_time: 0 },
      }),
      409,
      "conflict",
    );
    expect((await call(`${P}/measurements/${m}/basetimes/${created.body.id}`)).body).toEqual(created.body);
    const byId = await call(`${P}/measurements/${m}/basetimes/${created.body.id}`, {
      method: "PATCH",
      json: { priority: 10 },
    });
    expect(byId.body.priority).toBe(10);
    meas = (await call(`${P}/measurements/${m}`)).body;
    expect(meas.basetime_type).toBe("ntp");

    // The deprecated basetime_type of PUT raises that base time above the others.
    expect((await call(`${P}/measurements/${m}`, { method: "PUT", json: { basetime_type: "edge_rtc" } })).status).toBe(
      204,
    );
    meas = (await call(`${P}/measurements/${m}`)).body;
    expect(meas).toMatchObject({ basetime_type: "edge_rtc", basetime: BASETIME });
    expect((await call(`/v1/measurements/${m}/basetimes/ntp`, { method: "DELETE" })).status).toBe(204);
    expectError(await call(`${P}/measurements/${m}/basetimes/ntp`), 404, "not_found");
    expectError(await call(`${P}/measurements/${m}/basetimes/sundial`), 400, "invalid_request");
    expectError(
      await call(`${P}/measurements/${m}/basetimes/gps`, { method: "PUT", json: { priority: 3 } }),
      400,
      "invalid_request",
    );
    expectError(
      await call(`${P}/measurements/${m}`, { method: "PUT", json: { basetime_type: "gps" } }),
      400,
      "invalid_request",
    );
  });
});
