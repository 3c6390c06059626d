// Data arrival is coalesced per measurement; API changes publish every time.
import { afterEach, describe, expect, it } from "vitest";
import { MeasurementEvents, type MeasurementEvent } from "../../../cloud/measurements/service/events.js";

describe("measurements: event coalescing", () => {
  let ev: MeasurementEvents;
  afterEach(() => ev.close());

  it("publishes data arrival at once, then at most once per window (trailing edge), per measurement", async () => {
    ev = new MeasurementEvents(50);
    const got: MeasurementEvent[] = [];
    const off = ev.subscribe((e) => got.push(e));
    for (let i = 0; i < 100; i++) ev.publishThrottled("m1", "p");
    ev.publishThrottled("m2", "p");
    expect(got.map((e) => e.measUuid)).toEqual(["m1", "m2"]);
    await new Promise((r) => setTimeout(r, 120));
    expect(got.map((e) => e.measUuid)).toEqual(["m1", "m2", "m1"]);
    // Direct publishes are never held back.
    ev.publish("m1", "p");
    ev.publish("m1", "p");
    expect(got).toHaveLength(5);
    expect(got.every((e) => typeof e.occurredAtNs === "bigint" && e.projectUuid === "p")).toBe(true);
    off();
    ev.publish("m1", "p");
    expect(got).toHaveLength(5);
    expect(ev.listenerCount).toBe(0);
  });
});
