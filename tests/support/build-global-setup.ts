// Vitest global setup: compiles the sources to dist/ before any test runs, so tests that start the bins
// (bin/*.mjs run dist/) always run the code under test, also when one file is run with `npx vitest run`.
import { execFileSync } from "node:child_process";
import path from "node:path";

export default function setup(): void {
  execFileSync(process.execPath, [path.resolve(import.meta.dirname, "../../scripts/build.mjs"), "--quiet"], { stdio: "inherit" });
}
