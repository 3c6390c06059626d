// `npm run bench -- compression` at a tiny size (16 B points, off and context takeover at level 6, 1 s each):
// both rows come from the same run, every point is stored, and compression shows in the bytes on the wire.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-compression-test-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

it("reports wire bytes per point, CPU per chunk and throughput with compression off and on", async () => {
  const env = { ...process.env, BENCH_RESULTS_DIR: path.join(tmp, "results"), TMPDIR: tmp };
  const args = ["tsx", "bench/run.ts", "compression", "--duration", "1", "--cases", "16:off,16:ct6"];
  const child = spawn("npx", args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (b: Buffer) => (err += b.toString()));
  child.stdout.resume();
  const code = await new Promise((resolve) => child.on("exit", resolve));
  expect(code, err.slice(-2000)).toBe(0);
  const { rows } = JSON.parse(fs.readFileSync(path.join(tmp, "results", "compression.json"), "utf8")) as {
    rows: Array<Record<string, number | string>>;
  };
  expect(rows.map((r) => [r.payload_B, r.compression])).toEqual([
    [16, "off"],
    [16, "context takeover, level 6"],
  ]);
  const [off, on] = rows as [Record<string, number>, Record<string, number>];
  for (const r of rows) {
    expect(r.note, String(r.note)).toBe("");
    for (const k of ["points_per_s", "stored_points_per_s", "broker_cpu_us_per_chunk", "client_cpu_us_per_chunk"])
      expect(r[k], k).toBeGreaterThan(0);
  }
  // A 16-byte point travels as its payload and a few bytes of framing when not compressed.
  expect(off.up_wire_B_per_point).toBeGreaterThan(16);
  expect(off.deflate_us_per_chunk).toBe(0);
  expect(on.up_wire_B_per_point).toBeLessThan(off.up_wire_B_per_point);
  expect(on.down_wire_B_per_point).toBeLessThan(off.down_wire_B_per_point);
  expect(on.codec_B_per_point).toBeLessThan(off.codec_B_per_point);
  expect(on.deflate_us_per_chunk).toBeGreaterThan(0);
}, 300_000);
