// The hand-written source files the lint scripts look at: every script file
// under the given folders, except generated code (proto/gen) and run output.
import { existsSync, readdirSync } from "node:fs";

const EXTENSIONS = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const SKIPPED = new Set(["node_modules", "proto/gen", "bench/results", "data"]);

/** Relative paths, with forward slashes, sorted. Folders that do not exist are skipped. */
export function sourceFiles(folders) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED.has(path) && !SKIPPED.has(entry.name)) walk(path);
      } else if (entry.isFile() && EXTENSIONS.test(entry.name)) {
        found.push(path);
      }
    }
  };
  for (const folder of folders) if (existsSync(folder)) walk(folder.replace(/\/+$/, ""));
  return found.sort();
}

/** Where the project's sources live, relative to the repository root (the scripts run from there). */
export const SOURCE_FOLDERS = ["bin", "cloud", "runtime", "machines", "proto", "lib", "bench", "scripts"];
export const TEST_FOLDERS = ["tests"];
