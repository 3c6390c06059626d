// The vehicle the sample connector plays (--play vehicle): every stream at its rate, values a measurement
// engineer would believe, and frames that decode.
import { describe, expect, it } from "vitest";
import { VehicleSim } from "../../../runtime/connectors/vehicle.js";

describe("VehicleSim", () => {
  const sim = new VehicleSim();
  const points = sim.advance(240); // four minutes of driving: two laps and more
  const byName = new Map<string, typeof points>();
  for (const p of points)
    byName
      .set(p.name, byName.get(p.name) ?? [])
      .get(p.name)!
      .push(p);
  const f64 = (name: string) => byName.get(name)!.map((p) => p.payload.readDoubleBE(0));

  it("plays each stream at its rate, with its type", () => {
    const expected: Array<[string, string, number]> = [
      ["gnss/position", "json", 10],
      ["vehicle/speed", "float64", 50],
      ["vehicle/engine_rpm", "float64", 50],
      ["imu/acc_x", "float64", 100],
      ["imu/acc_y", "float64", 100],
      ["imu/acc_z", "float64", 100],
      ["engine/coolant_temp", "float64", 1],
      ["can/0x1A0", "bytes", 20],
    ];
    for (const [name, type, hz] of expected) {
      const list = byName.get(name) ?? [];
      expect(list.length, name).toBe(hz * 240 + 1);
      expect(new Set(list.map((p) => p.type)), name).toEqual(new Set([type]));
    }
  });

  it("drives around the track: speeds, positions, accelerations and temperatures in range", () => {
    const speeds = f64("vehicle/speed");
    expect(Math.min(...speeds)).toBe(0); // starts from standstill
    expect(Math.max(...speeds)).toBeGreaterThan(80);
    expect(Math.max(...speeds)).toBeLessThan(120);
    const positions = byName
      .get("gnss/position")!
      .map((p) => JSON.parse(p.payload.toString()) as { lat: number; lon: number; heading: number });
    const lats = positions.map((p) => p.lat);
    const lons = positions.map((p) => p.lon);
    // A track of about 1.4 km × 0.64 km: the positions spread over it, not one point.
    expect(Math.max(...lats) - Math.min(...lats)).toBeGreaterThan(0.004);
    expect(Math.max(...lons) - Math.min(...lons)).toBeGreaterThan(0.01);
    for (const p of positions) expect(p.heading).toBeGreaterThanOrEqual(0);
    for (const z of f64("imu/acc_z")) expect(Math.abs(z - 9.81)).toBeLessThan(0.5);
    expect(Math.max(...f64("imu/acc_y").map(Math.abs))).toBeGreaterThan(1); // corners push sideways
    const temps = f64("engine/coolant_temp");
    expect(temps[0]).toBeLessThan(25);
    expect(temps.at(-1)).toBeGreaterThan(50);
  });

  it("sends CAN frames with a counter and checksum, and a log line on gear changes and laps", () => {
    const frames = byName.get("can/0x1A0")!.map((p) => p.payload);
    for (const [i, f] of frames.entries()) {
      expect(f.length).toBe(8);
      expect(f[6]).toBe(i & 0xff);
      expect(f[7]).toBe([...f.subarray(0, 7)].reduce((a, b) => a + b, 0) & 0xff);
    }
    const log = byName.get("log/event")!.map((p) => p.payload.toString());
    expect(log.some((l) => /^gear 1 → 2 at \d+ km\/h$/.test(l))).toBe(true);
    expect(log.some((l) => /^lap 1 in \d+\.\d s$/.test(l))).toBe(true);
  });

  it("continues where it stopped: no point twice, times in order per stream", () => {
    const more = sim.advance(241);
    expect(more.filter((p) => p.name === "vehicle/speed").map((p) => p.t)[0]).toBeGreaterThan(240);
    for (const list of byName.values())
      for (let i = 1; i < list.length; i++) expect(list[i]!.t).toBeGreaterThanOrEqual(list[i - 1]!.t);
  });
});
