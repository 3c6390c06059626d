// Vitest setup file, only with TEST_CPU_LOG=FILE (vitest.config.ts): appends a JSON line per test file of the sqlite and
// postgres projects to FILE with the CPU-seconds it spent: loading the file and what it imports (before its first
// hook), running it, and in the child processes it waited for (cloud-peer and agent processes, npm, browsers). Files
// run one after another in a worker process (vitest's isolate: false), and a setup file runs again before each file:
// a file's figures are the worker's from this file's setup to its end; the worker's first file also carries the
// worker's start. A module loaded by an earlier file of the worker is not loaded again, so load_cpu_s is lower for
// later files. PostgreSQL servers are not children (pg_ctl starts them as daemons): their CPU is in no line. To find
// what the suite spends its CPU on: `TEST_CPU_LOG=/tmp/cpu.jsonl npm test`.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";

const TICKS = 100; // USER_HZ: /proc's unit of CPU time on Linux

/** This process's CPU-seconds, its waited-for children's, and its start (seconds after boot), from /proc. */
function usage() {
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15, cutime 16, cstime 17,
  // starttime 22.
  const f = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  return { self: (f[11]! + f[12]!) / TICKS, children: (f[13]! + f[14]!) / TICKS, start: f[19]! / TICKS };
}

const uptime = () => Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0]);

// Kept on the process object (not a global: tests/support/restore-globals.ts), whether a file of this worker ran before.
const RAN = Symbol.for("cpu-log: a file ran in this worker");
const first = !(RAN in process);
(process as unknown as Record<symbol, boolean>)[RAN] = true;
const begun = first ? { self: 0, children: 0, at: usage().start } : { ...usage(), at: uptime() };

let loaded: ReturnType<typeof usage>;
beforeAll(() => {
  loaded = usage();
});
afterAll(() => {
  const end = usage();
  const line = {
    project: process.env.CLOUD_TEST_DATABASE === "postgres" ? "postgres" : "sqlite",
    file: path.relative(process.cwd(), expect.getState().testPath ?? ""),
    load_cpu_s: +(loaded.self - begun.self).toFixed(2),
    run_cpu_s: +(end.self - loaded.self).toFixed(2),
    children_cpu_s: +(end.children - begun.children).toFixed(2),
    wall_s: +(uptime() - begun.at).toFixed(1),
    ended_at: new Date().toISOString(),
    worker_pid: process.pid,
    first_in_worker: first,
    load_average: os.loadavg()[0],
  };
  fs.appendFileSync(process.env.TEST_CPU_LOG!, `${JSON.stringify(line)}\n`);
});
