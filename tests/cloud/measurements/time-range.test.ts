// Times outside what RFC 3339 and a protobuf Timestamp can carry (years 0001-9999) are a 400 naming the field,
// years 0001-0099 keep their century, and a row stored before the check cannot break its project's list.
import { describe, expect, it } from "vitest";
import { BASETIME, P, createMeasurement, withPeer } from "./helpers.js";

const OUT_OF_RANGE = [
  "9223372036854775807",
  "-9223372036854775807",
  "-62135596800000001",
  "0000-12-31T23:59:59Z",
  "10000-01-01T00:00:00Z",
];

describe("measurements: out-of-range times", () => {
  const ctx = withPeer();

  it("answers 400 naming the field for every time input out of range, on bodies and queries", async () => {
    const meas = (await createMeasurement(ctx.call)).uuid;
    for (const t of OUT_OF_RANGE) {
      const calls: Array<[string, string, RequestInit & { json?: unknown }, string]> = [
        [
          "POST",
          `${P}/measurements`,
          { json: { basetime: t, basetime_type: "manual", edge_uuid: "5b0a3c4e-1f2d-4c3b-9a8e-7d6c5b4a3f21" } },
          "basetime",
        ],
        [
          "POST",
          `${P}/measurements/${meas}/basetimes`,
          { json: { basetime: t, priority: 1, name: "x", elapsed_time: 0 } },
          "basetime",
        ],
        ["PUT", `${P}/measurements/${meas}/basetimes/edge_rtc`, { json: { basetime: t } }, "basetime"],
        ["GET", `${P}/measurements?start=${t}`, {}, "start"],
        ["GET", `${P}/measurements?end=${t}`, {}, "end"],
        ["GET", `${P}/measurements?since=${t}`, {}, "since"],
        ["GET", `${P}/data?name=${meas}&start=${t}`, {}, "start"],
        ["GET", `${P}/data?name=${meas}&end=${t}`, {}, "end"],
        ["GET", `${P}/data?name=${meas}&since=${t}`, {}, "since"],
        ["GET", `${P}/data_ids?name=${meas}&start=${t}`, {}, "start"],
      ];
      for (const [method, path, init, field] of calls) {
        const r = await ctx.call(path, { method, ...init });
        expect(r.status, `${method} ${path} ${JSON.stringify(r.body)}`).toBe(400);
        expect(typeof r.body.title).toBe("string");
        expect(JSON.stringify(r.body), `${method} ${path}`).toContain(field);
      }
    }
    const list = await ctx.call(`${P}/measurements`);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
  });

  it("keeps the century of years 0001-0099 and takes negative microseconds within range", async () => {
    const early = await createMeasurement(ctx.call, { basetime: "0050-06-01T12:00:00.5Z" });
    expect(early.basetime).toBe("0050-06-01T12:00:00.500000000Z");
    const first = await createMeasurement(ctx.call, { basetime: "0001-01-01T00:00:00Z" });
    expect(first.basetime).toBe("0001-01-01T00:00:00Z");
    const negative = await createMeasurement(ctx.call, { basetime: "-1" });
    expect(negative.basetime).toBe("1969-12-31T23:59:59.999999000Z");
    const list = await ctx.call(`${P}/measurements?limit=1000`);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
  });

  it("lists a project whose stored row holds a base time no API could render", async () => {
    const good = (await createMeasurement(ctx.call)).uuid;
    const bad = (await createMeasurement(ctx.call)).uuid;
    // A row written before the check (or by hand): seconds far past year 275760, which no Date can hold.
    await ctx.peer.svc.db.run("UPDATE meas_measurements SET basetime_s = ? WHERE uuid = ?", [9_223_372_036_854, bad]);
    const list = await ctx.call(`${P}/measurements?limit=1000`);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    const uuids = list.body.items.map((m: { uuid: string }) => m.uuid);
    expect(uuids).toContain(good);
    expect(uuids).toContain(bad);
    expect(list.body.items.find((m: { uuid: string }) => m.uuid === bad).basetime).toBe(
      "9999-12-31T23:59:59.999999999Z",
    );
    const one = await ctx.call(`${P}/measurements/${bad}`);
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect((await ctx.call(`${P}/measurements/${good}`)).body.basetime).toBe(BASETIME);
  });
});
