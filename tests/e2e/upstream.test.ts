// Points a device connector writes into an upstream FIFO arrive in the cloud with their names, types,
// payloads and elapsed times intact, for both FIFO formats.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeIscpV2Frame } from "../../runtime/ipc/iscp-v2-compat.js";
import { encodeLoggerMsgRaw } from "../../runtime/ipc/logger-msg.js";
import { addRtUpstream, openFifoWriter, rfc3339Ns, startConnectedStack, until, type Stack } from "./stack.js";

let s: Stack;
beforeAll(async () => void (s = await startConnectedStack({}, addRtUpstream)), 120_000);
afterAll(async () => s?.close());

interface Sent {
  sec: number;
  nsec: number;
  type: string;
  name: string;
  payload: Buffer;
}

/** Writes frames with monotonic-clock timestamps (what connectors write), a few ms apart. */
async function writeFrames(fifo: string, frames: Sent[], encode: (f: Sent) => Buffer): Promise<void> {
  const fh = await openFifoWriter(fifo);
  try {
    for (const f of frames) await fh.write(encode(f));
  } finally {
    await fh.close();
  }
}

function framesAt(n: number, make: (i: number) => Omit<Sent, "sec" | "nsec">): Sent[] {
  const [sec, nsec] = process.hrtime();
  return Array.from({ length: n }, (_, i) => {
    const t = nsec + i * 1_234_567;
    return { sec: sec + Math.floor(t / 1e9), nsec: t % 1e9, ...make(i) };
  });
}

async function expectInCloud(channel: string, sent: Sent[], prefix: string): Promise<void> {
  const run = await until(
    () => {
      const r = s.agent!.dataPath.current;
      return r !== undefined && !r.isEnded && r;
    },
    30_000,
    "a measurement in progress",
  );
  const base = run.clock.clockBase;
  const meas = await until(
    async () => (await s.measurements()).find((m) => m.uuid === run.uuid),
    30_000,
    "measurement in the cloud",
  );
  const points = await until(
    async () => {
      const p = await s.points(run.uuid);
      return p.length >= sent.length && p;
    },
    30_000,
    `${sent.length} points of ${channel} in the cloud`,
  );
  const baseNs = rfc3339Ns(meas.basetime);
  // The measurement is the agent's (UUID = iSCP session id), its base time the agent's system clock (edge_rtc metadata).
  expect(baseNs).toBe(run.clock.baseTimeNs);
  expect((meas as { basetime_type?: string }).basetime_type).toBe("edge_rtc");
  expect(Math.abs(Number(baseNs / 1_000_000n) - Date.now())).toBeLessThan(60_000);
  const want = sent.map((f) => ({
    name: `${prefix}${f.name}`,
    type: f.type,
    payload: f.payload.toString("hex"),
    elapsed: BigInt(f.sec - base.sec) * 1_000_000_000n + BigInt(f.nsec - base.nsec),
  }));
  const got = points.map((p) => ({
    name: p.name,
    type: p.type,
    payload: p.payload.toString("hex"),
    elapsed: p.time - baseNs,
  }));
  expect(got).toEqual(want);
}

describe("upstream: connector FIFO -> agent -> iSCP -> cloud storage", () => {
  it("iscp-v2-compat frames arrive byte for byte with their elapsed times", async () => {
    await s.put("/device-connectors/upstream", {
      id: "v2",
      format: "iscp-v2-compat",
      dest_ids: ["rt"],
      data_name_prefix: "v2/",
      ipc: { type: "fifo", path: s.fifo("v2") },
    });
    const sent = framesAt(300, (i) => ({
      type: i % 3 === 0 ? "float64" : "bytes",
      name: i % 3 === 0 ? "imu/accel" : `can/${i % 2}`,
      payload: Buffer.from(Array.from({ length: 1 + (i % 40) }, (_, k) => (i * 7 + k) & 0xff)),
    }));
    await writeFrames(s.fifo("v2"), sent, (f) => encodeIscpV2Frame(f.sec, f.nsec, f.type, f.name, f.payload));
    await expectInCloud("v2", sent, "v2/");
    await s.agentApi.delete("/device-connectors/upstream/v2");
    await until(async () => s.agent!.dataPath.current?.isEnded !== false, 30_000, "measurement ended");
  }, 120_000);

  it("logger-msg frames (String DType and an unknown DType) arrive with their names and types", async () => {
    await s.put("/device-connectors/upstream", {
      id: "lm",
      format: "logger-msg",
      dest_ids: ["rt"],
      data_name_prefix: "lm/",
      ipc: { type: "fifo", path: s.fifo("lm") },
    });
    const sent = framesAt(100, (i) =>
      i % 2 === 0
        ? { type: "string", name: `text${i % 4}`, payload: Buffer.from(`hello ${i}`) }
        : { type: "bytes", name: "logger-msg/200", payload: Buffer.from([i, 0, 255]) },
    );
    await writeFrames(s.fifo("lm"), sent, (f) => encodeLoggerMsgRaw(f.sec, f.nsec, f.type, f.name, f.payload)!);
    await expectInCloud("lm", sent, "lm/");
  }, 120_000);
});
