// A recorded run of the demo's vehicle (runtime/connectors/vehicle.ts) uploaded as a finished measurement of
// an edge: the data a dashboard test shows (position, speed, rpm, IMU, temperature, a CAN frame, a log).
import { expect } from "vitest";
import { VehicleSim } from "../../runtime/connectors/vehicle.js";
import { P, chunksMessage, createMeasurement, uploadProto, uuid, type Call } from "../cloud/measurements/helpers.js";

export async function recordVehicleRun(call: Call, edge: string, seconds = 20): Promise<string> {
  const m = (await createMeasurement(call, { edge_uuid: edge })).uuid as string;
  const points = new VehicleSim().advance(seconds).map((p) => ({
    name: p.name,
    type: p.type,
    elapsed: BigInt(Math.round(p.t * 1e9)),
    payload: p.payload,
  }));
  const r = await uploadProto(call, chunksMessage(m, uuid(), [points]));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  for (const step of ["end", "complete"])
    expect((await call(`${P}/measurements/${m}/${step}`, { method: "PUT" })).status).toBe(200);
  return m;
}
