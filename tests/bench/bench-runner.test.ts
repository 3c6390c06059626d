// `npm run bench`: a case that fails makes the run exit non-zero and is named, with the table still printed; an
// unknown benchmark is refused at once; and what the benchmarks run (dist/) is built first when missing or stale,
// or the run stops with the command to run.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { staleBuild } from "../../bench/build-check.js";
import { caseLabel, rowFailed } from "../../bench/lib.js";
import { benchTemp, ROOT, runTsx } from "./run-bench.js";

const tmp = benchTemp("bench-runner-test-");
const run = (args: string[], env: NodeJS.ProcessEnv = {}) => runTsx(tmp, args, env);

it("exits non-zero naming the case that failed (a peer's program missing), after printing the table with the cases that ran", async () => {
  const r = await run(["bench/run.ts", "edges", "--systems", "node,nats", "--configs", "2x10", "--duration", "1"], {
    NATS_SERVER: path.join(tmp, "no-such-nats-server"),
  });
  expect(r.code, r.err.slice(-2000)).toBe(1);
  expect(r.err).toMatch(
    /bench: 1 case\(s\) failed:\n {2}edges: nats, 2 × 10: failed: nats-server not found: NATS_SERVER=\S+ is not there/,
  );
  expect(r.out).toContain("== edges ==");
  expect(r.out).toMatch(/^1 +node +2×10 +ack after fdatasync/m);
  expect(r.out).toMatch(/note \(row 2\): failed: nats-server not found/);
}, 300_000);

it("refuses an unknown benchmark before running any", async () => {
  const r = await run(["bench/run.ts", "codec", "edgez"]);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/unknown benchmark "edgez"; known: codec, /);
  expect(r.out).not.toContain("== codec ==");
});

it("names a failed row by its identifying fields", () => {
  expect(rowFailed({ note: "failed: gone" })).toBe(true);
  expect(rowFailed({ note: "3 publishes failed" })).toBe(false);
  expect(caseLabel({ system: "ours", edges: 100, rate_per_edge: 1000, note: "failed: x" })).toBe("ours, 100 × 1000");
  expect(caseLabel({ backend: "postgres", instances: 2, edges: 4, rate_per_edge: 50 })).toBe(
    "postgres, 2 instance(s), 4 × 50",
  );
  expect(caseLabel({ case: "throughput", path: "nats", payload_B: 16, rate: "max" })).toBe(
    "throughput, nats, 16 B, at max",
  );
});

/** A package tree with one source and a scripts/build.mjs that runs `build` (JavaScript). */
function fakeTree(name: string, build: string): string {
  const root = path.join(tmp, name);
  fs.mkdirSync(path.join(root, "lib"), { recursive: true });
  fs.mkdirSync(path.join(root, "scripts"));
  fs.writeFileSync(path.join(root, "lib", "a.ts"), "export const a = 1;\n");
  fs.writeFileSync(path.join(root, "scripts", "build.mjs"), build);
  return root;
}

it("finds dist/ missing or older than a source, and current once built", () => {
  const root = fakeTree("stale", "");
  expect(staleBuild(root)).toBe("dist/ is missing");
  fs.mkdirSync(path.join(root, "dist", "lib"), { recursive: true });
  expect(staleBuild(root)).toBe("dist/ has no dist/lib/a.js");
  fs.writeFileSync(path.join(root, "dist", "lib", "a.js"), "export const a = 1;\n");
  expect(staleBuild(root)).toBeUndefined();
  const later = new Date(Date.now() + 60_000);
  fs.utimesSync(path.join(root, "lib", "a.ts"), later, later);
  expect(staleBuild(root)).toBe("lib/a.ts is newer than dist/");
});

const ensure = (root: string) =>
  run([
    "--input-type=module",
    "-e",
    `const m = await import(${JSON.stringify(path.join(ROOT, "bench/build-check.ts"))}); m.ensureBuilt(${JSON.stringify(root)}); console.log("ran");`,
  ]);

it("builds first when dist/ is missing, and stops at once with the command to run when the build fails", async () => {
  const builds = fakeTree(
    "builds",
    `import fs from "node:fs"; fs.mkdirSync("dist/lib", { recursive: true }); fs.writeFileSync("dist/lib/a.js", "");\n`,
  );
  const ok = await ensure(builds);
  expect(ok.code, ok.err).toBe(0);
  expect(ok.err).toContain("bench: dist/ is missing: building first (npm run build)");
  expect(ok.out).toContain("ran");
  expect(staleBuild(builds)).toBeUndefined();

  const fails = fakeTree("fails", "process.exit(1);\n");
  const bad = await ensure(fails);
  expect(bad.code).toBe(2);
  expect(bad.err).toMatch(
    /bench: the build failed \(exit 1\); run `npm run build`, fix what it reports, and run the bench again/,
  );
  expect(bad.out).not.toContain("ran");
});
