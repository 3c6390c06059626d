// `npm run screenshots`: regenerates the console guide's pictures (docs/guide/images/console-*.png) from the
// running demo. Runs tests/docs/console-guide.test.ts with CONSOLE_SCREENSHOTS set to a temp dir; when it passes
// (the guide shows exactly the pictures it took), replaces the console pictures in docs/guide/images with them.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const shots = fs.mkdtempSync(path.join(os.tmpdir(), "console-screenshots-"));
const images = path.join(root, "docs", "guide", "images");
try {
  const vitest = path.join(root, "node_modules", "vitest", "vitest.mjs");
  const run = spawnSync(process.execPath, [vitest, "run", "tests/docs/console-guide.test.ts", "--project", "sqlite"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, CONSOLE_SCREENSHOTS: shots },
  });
  if (run.status !== 0) throw new Error("the console guide's test failed: no pictures were copied");
  fs.mkdirSync(images, { recursive: true });
  for (const f of fs.readdirSync(images).filter((f) => /^console-[\w-]+\.png$/.test(f)))
    fs.rmSync(path.join(images, f));
  for (const f of fs
    .readdirSync(shots)
    .filter((f) => /^console-[\w-]+\.png$/.test(f))
    .sort()) {
    fs.copyFileSync(path.join(shots, f), path.join(images, f));
    console.log(`docs/guide/images/${f} (${Math.round(fs.statSync(path.join(images, f)).size / 1024)} KiB)`);
  }
} catch (err) {
  console.error(err.message);
  process.exitCode = 1;
} finally {
  fs.rmSync(shots, { recursive: true, force: true });
}
