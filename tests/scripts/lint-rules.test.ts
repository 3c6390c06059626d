// The lint rules (scripts/check-*.mjs, .dependency-cruiser.cjs) run as child processes on small
// trees in a temp dir: each must flag what breaks its rule and pass what keeps it.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
let dir: string | undefined;

/** Writes the files into a fresh temp dir and runs the script there; returns its exit code and output. */
function runOn(script: string, files: Record<string, string>) {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "lint-rules-"));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const run = spawnSync(process.execPath, [path.join(ROOT, "scripts", script)], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: run.status, out: run.stdout + run.stderr };
}

afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("check-sql", () => {
  it("flags SQL in a service's string literal, with file and line", () => {
    const r = runOn("check-sql.mjs", {
      "cloud/org/service/a.ts": 'export const n = 1;\nexport const q = "SELECT uuid FROM org_groups";\n',
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain("cloud/org/service/a.ts:2: SELECT uuid FROM");
  });

  it("flags statements in template literals and outside cloud/", () => {
    const r = runOn("check-sql.mjs", {
      "runtime/x.ts": "export const t = (n: string) => `UPDATE ${n} SET v = 1`;\n",
      "bench/y.ts": 'export const p = "PRAGMA journal_mode = WAL";\n',
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain("runtime/x.ts:1");
    expect(r.out).toContain("bench/y.ts:1: PRAGMA journal_mode");
  });

  it("passes SQL in repo/ and storage/, and SQL words in comments, prose and headers", () => {
    const r = runOn("check-sql.mjs", {
      "cloud/org/repo/groups.ts": 'export const q = "DELETE FROM org_groups WHERE uuid = ?";\n',
      "cloud/measurements/ingest/repo/rows.ts": 'export const q = "INSERT INTO rows (a) VALUES (?)";\n',
      "cloud/database/db.ts": 'export const q = "CREATE TABLE IF NOT EXISTS t (k TEXT)";\n',
      "cloud/org/service/b.ts": [
        "// SELECT the groups FROM the index, then DELETE FROM the cache.",
        "/* INSERT INTO nothing */",
        'export const headers = { Pragma: "no-cache" };',
        'export const summary = "Update a user (select fields from the body)";',
        "export const f = (repo: { update(): void }) => repo.update();",
      ].join("\n"),
    });
    expect(r.out).toBe("");
    expect(r.code).toBe(0);
  });
});

describe("check-file-size", () => {
  it("flags a hand-written file over 400 lines and ignores generated proto/gen", () => {
    const long = "export const x = 1;\n".repeat(401);
    const r = runOn("check-file-size.mjs", {
      "cloud/long.ts": long,
      "tests/fine.test.ts": "export const y = 1;\n".repeat(400),
      "proto/gen/iscp.js": long,
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain("cloud/long.ts: 401 lines");
    expect(r.out).not.toContain("fine.test.ts");
    expect(r.out).not.toContain("proto/gen");
  });
});

describe("check-imports", () => {
  const base = {
    "tsconfig.json": JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true },
    }),
    "package.json": JSON.stringify({ type: "module" }),
  };
  const withConfig = (files: Record<string, string>) => ({
    ...base,
    ".dependency-cruiser.cjs": fs.readFileSync(path.join(ROOT, ".dependency-cruiser.cjs"), "utf8"),
    ...files,
  });

  it("flags value cycles, runtime -> cloud, machines -> runtime values, proto and lib reaching out, the agent's sqlite3", () => {
    const r = runOn(
      "check-imports.mjs",
      withConfig({
        "cloud/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
        "cloud/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
        "runtime/r.ts": 'import { a } from "../cloud/a.js";\nexport const r = a;\n',
        "machines/m.ts": 'import { r } from "../runtime/r.js";\nexport const m = r;\n',
        "proto/p.ts": 'import { m } from "../machines/m.js";\nexport const p = m;\n',
        "lib/l.ts": 'import { p } from "../proto/p.js";\nexport const l = p;\n',
        "runtime/s.ts": 'import type sqlite3 from "sqlite3";\nexport type S = typeof sqlite3;\n',
        "cloud/s.ts": 'import sqlite3 from "sqlite3";\nexport const s = sqlite3;\n',
      }),
    );
    expect(r.code).toBe(1);
    expect(r.out).toContain("agent-not-to-sqlite3: runtime/s.ts → sqlite3");
    expect(r.out).not.toContain("cloud/s.ts →");
    expect(r.out).toMatch(/no-value-cycle: cloud\/a\.ts/);
    expect(r.out).toContain("runtime-not-to-cloud: runtime/r.ts → cloud/a.ts");
    expect(r.out).toContain("machines-not-to-runtime-values: machines/m.ts → runtime/r.ts");
    expect(r.out).toContain("proto-stands-alone: proto/p.ts → machines/m.ts");
    expect(r.out).toContain("lib-stands-alone: lib/l.ts → proto/p.ts");
  });

  it("flags the agent's queue importing a stage around it, and passes the stages importing the queue", () => {
    const r = runOn(
      "check-imports.mjs",
      withConfig({
        "runtime/queue/store.ts": "export class DurableQueue {}\n",
        "runtime/datapath/chunk-batcher.ts":
          'import { DurableQueue } from "../queue/store.js";\nexport const b = new DurableQueue();\n',
        "runtime/queue/evict.ts": 'import { b } from "../datapath/chunk-batcher.js";\nexport const e = b;\n',
      }),
    );
    expect(r.code).toBe(1);
    expect(r.out).toContain("queue-is-the-store: runtime/queue/evict.ts → runtime/datapath/chunk-batcher.ts");
    expect(r.out).not.toContain("runtime/datapath/chunk-batcher.ts →");
  });

  it("flags a cloud area reaching into another area's insides, and infrastructure importing an area", () => {
    const r = runOn(
      "check-imports.mjs",
      withConfig({
        "cloud/oauth/repo/clients.ts": "export const clientsRepo = {};\n",
        "cloud/console/client.ts":
          'import { clientsRepo } from "../oauth/repo/clients.js";\nexport const c = clientsRepo;\n',
        "cloud/http/error-reply.ts": 'import { e } from "../oauth/service/errors.js";\nexport const r = e;\n',
        "cloud/oauth/service/errors.ts": "export const e = 1;\n",
      }),
    );
    expect(r.code).toBe(1);
    expect(r.out).toContain("areas-meet-through-modules: cloud/console/client.ts → cloud/oauth/repo/clients.ts");
    expect(r.out).toContain("infrastructure-not-to-areas: cloud/http/error-reply.ts → cloud/oauth/service/errors.ts");
  });

  it("passes an area using another's service/, schemas.ts, module.ts, its own insides, and types from anywhere", () => {
    const r = runOn(
      "check-imports.mjs",
      withConfig({
        "cloud/oauth/repo/clients.ts": "export type ClientRecord = { id: string };\nexport const clientsRepo = {};\n",
        "cloud/oauth/service/fixed.ts":
          'import { clientsRepo } from "../repo/clients.js";\nexport const fixed = clientsRepo;\n',
        "cloud/oauth/schemas.ts": "export const Uuid = 1;\n",
        "cloud/oauth/module.ts": 'export { fixed } from "./service/fixed.js";\n',
        "cloud/console/client.ts":
          'import type { ClientRecord } from "../oauth/repo/clients.js";\nimport { fixed } from "../oauth/service/fixed.js";\n' +
          'import { Uuid } from "../oauth/schemas.js";\nimport * as m from "../oauth/module.js";\nexport const c = (r: ClientRecord) => [r, fixed, Uuid, m];\n',
        "cloud/cli/admin.ts":
          'import { clientsRepo } from "../oauth/repo/clients.js";\nexport const a = clientsRepo;\n',
      }),
    );
    expect(r.out).not.toContain("error");
    expect(r.code).toBe(0);
  });

  it("passes type-only cycles and type-only imports of runtime settings from machines", () => {
    const r = runOn(
      "check-imports.mjs",
      withConfig({
        "cloud/a.ts": 'import type { B } from "./b.js";\nexport type A = { b?: B };\nexport const a = 1;\n',
        "cloud/b.ts": 'import { a } from "./a.js";\nexport type B = { a: typeof a };\nexport const b = a;\n',
        "runtime/settings.ts": "export type Settings = { url: string };\n",
        "machines/m.ts":
          'import type { Settings } from "../runtime/settings.js";\nexport const m = (s: Settings) => s.url;\n',
      }),
    );
    expect(r.out).not.toContain("error");
    expect(r.code).toBe(0);
  });
});
