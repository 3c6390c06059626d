// Vitest global setup: compiles the sources to dist/ before any test runs, so tests that start the bins
// (bin/*.mjs run dist/) always run the code under test, also when one file is run with `npx vitest run`.
// The build is skipped when dist/ was built from the same sources: a fingerprint of every source file's
// path, size and modification time (and the lock file's) is kept in dist/. So a run builds once even with
// several projects, and a run after an unchanged one starts at once.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SOURCES = ["bin", "cloud", "runtime", "machines", "proto", "lib", "scripts/build.mjs", "package-lock.json"];
const STAMP = path.join(ROOT, "dist", ".sources-fingerprint");

/** A digest of the sources' paths, sizes and modification times: any edit, addition or removal changes it. */
export function sourcesFingerprint(root = ROOT): string {
  const hash = crypto.createHash("sha256");
  const visit = (rel: string): void => {
    const full = path.join(root, rel);
    const st = fs.statSync(full, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const name of fs.readdirSync(full).sort()) if (name !== "node_modules") visit(path.join(rel, name));
    } else hash.update(`${rel}\0${st.size}\0${st.mtimeMs}\n`);
  };
  for (const s of SOURCES) visit(s);
  return hash.digest("hex");
}

export default function setup(): void {
  const fingerprint = sourcesFingerprint();
  if (fs.existsSync(STAMP) && fs.readFileSync(STAMP, "utf8") === fingerprint) return;
  execFileSync(process.execPath, [path.join(ROOT, "scripts", "build.mjs"), "--quiet"], { stdio: "inherit" });
  fs.writeFileSync(STAMP, fingerprint);
}
