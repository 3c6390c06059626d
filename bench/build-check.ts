// The benchmarks that start our commands (bin/*.mjs) run what `npm run build` compiled into dist/. A fresh
// clone has no dist/, and an edited source leaves a stale one: either way the bench would measure nothing or
// old code. So the runner builds first (scripts/build.mjs, what `npm run build` runs) whenever a source is
// newer than its compiled file, and stops at once with the command to run when the build fails.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** What scripts/build.mjs compiles (the browser console is bundled apart and no bench process loads it). */
const SOURCES = ["bin", "cloud", "runtime", "machines", "proto", "lib"];
const WEB = path.join("cloud", "console", "web") + path.sep;

/** The first source whose compiled file under dist/ is missing or older, as "why", or undefined when all are current. */
export function staleBuild(root = ROOT): string | undefined {
  const dist = path.join(root, "dist");
  if (!fs.existsSync(dist)) return "dist/ is missing";
  for (const dir of SOURCES) {
    const base = path.join(root, dir);
    if (!fs.existsSync(base)) continue;
    for (const f of fs.readdirSync(base, { recursive: true }).map(String)) {
      const rel = path.join(dir, f);
      if (rel.startsWith(WEB) || rel.endsWith(".d.ts") || !rel.endsWith(".ts")) continue;
      const out = path.join(dist, rel.replace(/\.ts$/, ".js"));
      const src = fs.statSync(path.join(root, rel)).mtimeMs;
      const built = fs.existsSync(out) ? fs.statSync(out).mtimeMs : -1;
      if (built < 0) return `dist/ has no ${path.relative(root, out)}`;
      if (built < src) return `${rel} is newer than dist/`;
    }
  }
  return undefined;
}

/** Builds dist/ when it is missing or stale; exits with status 2 and the command to run when the build fails. */
export function ensureBuilt(root = ROOT): void {
  const why = staleBuild(root);
  if (why === undefined) return;
  process.stderr.write(`bench: ${why}: building first (npm run build)\n`);
  const r = spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs"), "--quiet"], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.status !== 0) {
    process.stderr.write(
      `bench: the build failed (${r.error?.message ?? `exit ${r.status}`}); run \`npm run build\`, fix what it reports, and run the bench again\n`,
    );
    process.exit(2);
  }
}
