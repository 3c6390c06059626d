// Base times as the intdash SDK's import lesson handles them: it creates the measurement from an
// exported one (read-only fields included), deletes every base time, the one in use too, and creates
// the exported ones again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestPeer } from "../harness.js";
import {
  BASETIME,
  EDGE,
  P,
  chunksMessage,
  expectError,
  ndjson,
  startPeerWithAdmin,
  uploadProto,
  uuid,
  type Call,
} from "./helpers.js";

describe("measurements: deleting base times, the current one included", () => {
  let peer: TestPeer;
  let call: Call;
  let token: string;
  beforeAll(async () => ({ peer, token, admin: call } = await startPeerWithAdmin()));
  afterAll(() => peer?.stop());

  it("runs the import lesson's sequence: create from an export, delete all base times, create them again", async () => {
    // An exported measurement as the SDK sends it back: every field of the read model.
    const exported = {
      uuid: uuid(),
      name: "imported",
      description: "",
      basetime: BASETIME,
      basetime_type: "ntp",
      edge_uuid: EDGE,
      protected: false,
      duration: 0,
      processed_ratio: 1,
      ended: true,
      status: "finished",
      received_data_points: 3,
      max_elapsed_time: 2000,
      completed: true,
      max_priority_basetime_id: 7,
      sequences: { received_chunks_ratio: 1, received_data_points: 3, status: "completed" },
      markers: [],
      created_at: "2026-01-02T03:04:05Z",
      updated_at: "2026-01-02T03:04:09Z",
    };
    const created = await call(`${P}/measurements`, { method: "POST", json: exported });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const m = created.body.uuid;
    expect(m).not.toBe(exported.uuid);
    expect(created.body).toMatchObject({ name: "imported", basetime: BASETIME, basetime_type: "ntp" });

    const current = (await call(`${P}/measurements/${m}/basetimes`)).body.items;
    expect(current).toHaveLength(1);
    for (const bt of current)
      expect((await call(`${P}/measurements/${m}/basetimes/${bt.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`${P}/measurements/${m}/basetimes`)).body.items).toEqual([]);
    // With no base time left the measurement keeps its time and type, and names no base time.
    const bare = (await call(`${P}/measurements/${m}`)).body;
    expect(bare).toMatchObject({ basetime: BASETIME, basetime_type: "ntp" });
    expect(bare.max_priority_basetime_id).toBeUndefined();
    // Data stays readable at the same absolute times meanwhile.
    const r = await uploadProto(
      call,
      chunksMessage(m, uuid(), [[{ name: "1/x", type: "float64", elapsed: 1_000n, payload: new Uint8Array(8) }]]),
    );
    expect(r.status).toBe(200);
    const at = async () =>
      ndjson(
        await (
          await peer.api(`${P}/data?name=${m}&time_format=rfc3339`, { headers: { "X-Intdash-Token": token } })
        ).text(),
      )[0].time;
    expect(await at()).toBe("2026-01-02T03:04:05.123457789Z");

    // The exported base times, sent back whole (id, type and times included).
    const exportedBaseTimes = [
      {
        id: 11,
        type: "edge_rtc",
        basetime: "2026-01-02T03:04:05Z",
        priority: 20,
        name: "edge_rtc",
        elapsed_time: 0,
        created_at: "2026-01-02T03:04:05Z",
        updated_at: "2026-01-02T03:04:05Z",
      },
      {
        id: 12,
        type: "ntp",
        basetime: "2026-01-02T03:04:06.25Z",
        priority: 40,
        name: "ntp",
        elapsed_time: 0,
        created_at: "2026-01-02T03:04:05Z",
        updated_at: "2026-01-02T03:04:05Z",
      },
    ];
    const ids: number[] = [];
    for (const bt of exportedBaseTimes) {
      const c = await call(`${P}/measurements/${m}/basetimes`, { method: "POST", json: bt });
      expect(c.status, JSON.stringify(c.body)).toBe(201);
      expect(c.body).toMatchObject({ type: bt.type, name: bt.name, priority: bt.priority });
      ids.push(c.body.id);
    }
    expect((await call(`${P}/measurements/${m}`)).body).toMatchObject({
      basetime_type: "ntp",
      basetime: "2026-01-02T03:04:06.250000000Z",
      max_priority_basetime_id: ids[1],
    });
    expect(await at()).toBe("2026-01-02T03:04:06.250001000Z");

    // Deleting the one in use hands the measurement to the highest priority left.
    expect((await call(`${P}/measurements/${m}/basetimes/${ids[1]}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`${P}/measurements/${m}`)).body).toMatchObject({
      basetime_type: "edge_rtc",
      basetime: "2026-01-02T03:04:05Z",
      max_priority_basetime_id: ids[0],
    });
    expectError(await call(`${P}/measurements/${m}/basetimes/${ids[1]}`, { method: "DELETE" }), 404, "not_found");
  });
});
