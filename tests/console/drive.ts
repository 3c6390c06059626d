// A recorded drive for the console's browser tests: one lap of a test track at 10 Hz for 60 s (a GNSS position
// as JSON, a speed), a log line a few times, and a string series of binary data; ended and complete.
import { expect } from "vitest";
import {
  P,
  chunksMessage,
  createMeasurement,
  uploadProto,
  uuid,
  type Call,
  type TestPoint,
} from "../cloud/measurements/helpers.js";

/** Points in the drive per series (10 Hz for 60 s). */
export const DRIVE_POINTS = 600;

export async function recordDrive(call: Call): Promise<string> {
  const m = (await createMeasurement(call)).uuid as string;
  const points: TestPoint[] = [];
  const at = (i: number) => BigInt(i) * 100_000_000n; // 10 Hz
  for (let i = 0; i < DRIVE_POINTS; i++) {
    const a = (2 * Math.PI * i) / DRIVE_POINTS; // one lap of an ellipse
    points.push({
      name: "gnss/position",
      type: "json",
      elapsed: at(i),
      payload: Buffer.from(JSON.stringify({ lat: 35 + 0.003 * Math.sin(a), lon: 137 + 0.008 * Math.cos(a), alt: 50 })),
    });
    points.push({
      name: "vehicle/speed",
      type: "float64",
      elapsed: at(i),
      payload: Buffer.from(new Float64Array([60 + 20 * Math.sin(a * 3)]).buffer).reverse(),
    });
    if (i % 60 === 0)
      points.push({
        name: "log/event",
        type: "string",
        elapsed: at(i),
        payload: Buffer.from(i === 300 ? "lap 1 half way" : `gear change ${i / 60}`),
      });
    if (i % 100 === 0)
      points.push({
        name: "raw/serial",
        type: "string",
        elapsed: at(i),
        payload: Buffer.from([0x00, 0x01, 0xfe, 0x41]),
      });
  }
  expect((await uploadProto(call, chunksMessage(m, uuid(), [points]))).status).toBe(200);
  for (const step of ["end", "complete"])
    expect((await call(`${P}/measurements/${m}/${step}`, { method: "PUT" })).status).toBe(200);
  return m;
}
