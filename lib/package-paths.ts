// Where the package's files are, for code that runs both from the TypeScript sources (tests, dev scripts
// through tsx) and compiled under dist/ (the installed package): the package root, its version, and how
// to start one of its entry scripts as a node child process in the same form as the running code.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** True when this code is the compiled JavaScript under dist/, false when it runs from the .ts sources. */
export const COMPILED = !import.meta.url.endsWith(".ts");

/** The directory that holds the code tree (lib/, runtime/, ...): the package root, or its dist/. */
export const CODE_ROOT = path.resolve(here, "..");

/** The package root: the nearest directory upwards with a package.json (dist/ has none). */
export const PACKAGE_ROOT = ((): string => {
  for (let dir = CODE_ROOT; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return CODE_ROOT;
  }
})();

export const PACKAGE_VERSION: string = JSON.parse(
  fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8"),
).version;

/**
 * The node arguments that run the entry script `script` (a path of a .ts source from the package root,
 * e.g. "runtime/connectors/sample-connector.ts"): its compiled .js when this code is compiled (no
 * TypeScript loader in production), the source through tsx otherwise.
 */
export function nodeEntryArgs(script: string): string[] {
  if (COMPILED) return [path.join(CODE_ROOT, script.replace(/\.ts$/, ".js"))];
  return ["--import", "tsx", path.join(CODE_ROOT, script)];
}
