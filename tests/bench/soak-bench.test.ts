// `npm run bench -- soak` at a tiny size (WebSocket on SQLite, 40 s, the cheap faults once each): the row counts
// every point the connector sent, the agent accepted and the cloud stored, with none lost or stored twice, no
// process crashed, and live data came back at the viewer after every fault (how fast is the benchmark's to
// judge, not a test's). The targets' judgement itself is checked on made-up rows.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { options } from "../../bench/soak/options.js";
import { missed } from "../../bench/soak/report.js";
import type { RowResult } from "../../bench/soak/row.js";
import { benchTemp, runBench } from "./run-bench.js";

const tmp = benchTemp("bench-soak-test-");
const asRoot = process.getuid?.() === 0;

it("counts sent, accepted, acknowledged and stored points across a proxy cut, a full disk, a renewed certificate and an agent restart", async () => {
  const faults = ["proxy-cut", ...(asRoot ? ["disk-full"] : []), "cert-renewal", "agent-restart"];
  const args = ["--duration", "40", "--rate", "200", "--hold", "2", "--recover", "6", "--warmup", "5", "--sample", "2"];
  const r = await runBench(tmp, "soak", [...args, "--faults", faults.join(",")], { TMPDIR: tmp });
  const json = JSON.parse(fs.readFileSync(path.join(tmp, "results", "soak.json"), "utf8")) as {
    rows: Array<Record<string, unknown>>;
  };
  const [row] = json.rows;
  expect(row, r.err.slice(-3000)).toMatchObject({
    path: "websocket/sqlite",
    rate: 200,
    lost: 0,
    duplicated: 0,
    crashes: 0,
  });
  expect(row!.sent as number).toBeGreaterThan(0);
  expect(row!.accepted).toBe(row!.sent);
  expect(row!.acknowledged).toBe(row!.sent);
  expect(row!.stored).toBe(row!.sent);
  const log = row!.fault_log as Array<{ fault: string; live_gap_s: number | null; error?: string }>;
  // Each fault once, in order (the run's 40 s may end before the last ones on a busy machine, never before the first).
  expect(log.length).toBeGreaterThanOrEqual(1);
  expect(log.map((f) => f.fault)).toEqual(faults.slice(0, log.length));
  for (const f of log) {
    expect(f.error, f.fault).toBeUndefined();
    expect(f.live_gap_s, f.fault).toEqual(expect.any(Number));
  }
  const roles = (row!.slopes as Array<{ role: string; lives: number }>).map((s) => s.role).sort();
  expect(roles).toEqual(["agent", "cloud-0", "connector"]);
}, 240_000);

it("misses a target for a lost, a duplicated or an unknown point, a crash, a live gap over 10 s or never closed", () => {
  const o = { ...options(["--matrix"]), durationS: 600 };
  const ok: RowResult = {
    row: "websocket/sqlite",
    rate: 100,
    duration_s: 600,
    sent: 10,
    accepted: 10,
    acknowledged: 10,
    stored: { stored: 10, duplicated: 0, unknown: 0, firstMissing: [] },
    lost: 0,
    crashes: [],
    faults: [{ fault: "cloud-kill", at_s: 15, live_gap_s: 9.9 }],
    slopes: [
      {
        role: "agent",
        span_s: 300,
        from_s: 120,
        rss_first_MiB: 100,
        rss_last_MiB: 150,
        rss_MiB_per_h: 600,
        rss_least_squares_MiB_per_h: 600,
        fd_first: 20,
        fd_last: 20,
        fd_per_h: 0,
        lives: 1,
      },
    ],
    viewer_connects: 1,
    notes: [],
    load: { start: [], end: [] },
  };
  // Slopes are judged on long runs only.
  expect(missed(ok, o)).toEqual([]);
  expect(missed(ok, { ...o, durationS: 3600 })).toEqual(["agent RSS grows 600 MiB/h"]);
  // A process whose slope could not be read is not taken as flat.
  const unread = { ...ok.slopes[0]!, role: "cloud-0", span_s: 0, rss_MiB_per_h: null, fd_per_h: null };
  expect(missed({ ...ok, slopes: [{ ...unread, from_s: null }] }, { ...o, durationS: 3600 })).toEqual([
    "cloud-0 RSS not judged: its cache never filled in a life",
  ]);
  expect(missed({ ...ok, slopes: [unread] }, { ...o, durationS: 3600 })).toEqual([
    "cloud-0 RSS not judged: no life ran long enough after 120 s",
  ]);
  expect(missed({ ...ok, lost: 2, stored: { ...ok.stored, stored: 8, firstMissing: [3, 4] } }, o)).toEqual([
    "2 acknowledged points not stored (first missing: 3, 4)",
  ]);
  expect(missed({ ...ok, lost: null }, o)).toEqual(["the agent's queue did not drain: lost points cannot be counted"]);
  expect(missed({ ...ok, stored: { ...ok.stored, duplicated: 1, unknown: 1 } }, o)).toHaveLength(2);
  expect(missed({ ...ok, crashes: ["agent exited by itself (SIGSEGV) at 20 s"] }, o)).toHaveLength(1);
  expect(missed({ ...ok, faults: [{ fault: "nats-stop", at_s: 15, live_gap_s: 10.5 }] }, o)).toEqual([
    "live data back 10.5 s after nats-stop at 15 s",
  ]);
  expect(missed({ ...ok, faults: [{ fault: "nats-stop", at_s: 15, live_gap_s: null }] }, o)).toEqual([
    "no live data after nats-stop at 15 s",
  ]);
});
