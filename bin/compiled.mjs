// Loads a bin's compiled entry from dist/; a checkout that was never built gets one clear line.
import fs from "node:fs";

export async function loadCompiled(name, rel) {
  const url = new URL(`../dist/${rel}`, import.meta.url);
  if (!fs.existsSync(url)) {
    process.stderr.write(`${name}: the compiled code (dist/${rel}) is missing: run \`npm run build\` first\n`);
    process.exit(2);
  }
  return import(url.href);
}
