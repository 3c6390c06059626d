// `npm run build`: compiles the hand-written TypeScript to JavaScript under dist/ (same tree, with source
// maps), so installed bins run plain node without a TypeScript loader. One file in, one file out: esbuild only
// strips the types (tsc stays the type-checker, `npm run typecheck`). The edge agent is bundled besides
// (dist/bundle/, bundleAgent below).
// The generated protobuf codecs (proto/gen/*.js) are JavaScript already and are copied as they are.
// The web console (cloud/console/web, browser code) is bundled by Vite into dist/console/.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist");
const SOURCES = ["bin", "cloud", "runtime", "machines", "proto", "lib"];

const filesUnder = (dir) =>
  fs.existsSync(path.join(root, dir))
    ? fs.readdirSync(path.join(root, dir), { recursive: true }).map((f) => path.join(dir, String(f)))
    : [];
const WEB = path.join("cloud", "console", "web");
const all = SOURCES.flatMap(filesUnder).filter((f) => !f.startsWith(WEB + path.sep));
const entryPoints = all.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")).map((f) => path.join(root, f));
const copied = all.filter((f) => f.startsWith(path.join("proto", "gen")) && f.endsWith(".js"));

const t0 = Date.now();
// A fresh tree (a deleted or moved source must not live on as a stale .js), built beside dist/ and swapped
// in at the end, so processes that start meanwhile find a whole tree.
const next = `${out}.next-${process.pid}`;
fs.rmSync(next, { recursive: true, force: true });
await build({
  entryPoints,
  outdir: next,
  outbase: root,
  bundle: false,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
});
for (const f of copied) fs.cpSync(path.join(root, f), path.join(next, f));
await bundleAgent(path.join(next, "bundle"));
await buildConsole(path.join(next, "console"));
const old = `${out}.old-${process.pid}`;
if (fs.existsSync(out)) fs.renameSync(out, old);
fs.renameSync(next, out);
fs.rmSync(old, { recursive: true, force: true });
if (!process.argv.includes("--quiet"))
  console.log(`build: ${entryPoints.length} files compiled to dist/ in ${Date.now() - t0} ms`);

/**
 * The edge agent as bin/edge-agent.mjs runs it: its code and its pure-JavaScript libraries in a few files
 * (dist/bundle/edge-agent.mjs and the chunks its dynamic imports load, so the socket still listens before the
 * rest is loaded). Module by module (~600 files) a start cost about 1 s of CPU, most of it the loader resolving
 * and compiling; on a busy device that was most of the time without live data after a restart
 * (docs/datapath.md "Startup"). Outside the bundle: native modules (lmdb, msgpackr's, QUIC's, bufferutil) and pino
 * (its transports start workers from files).
 */
async function bundleAgent(outdir) {
  await build({
    entryPoints: [path.join(root, "runtime/cli/edge-agent.ts")],
    outdir,
    outExtension: { ".js": ".mjs" },
    entryNames: "[name]",
    chunkNames: "[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    logLevel: "warning",
    external: [
      "lmdb",
      "msgpackr",
      "msgpackr-extract",
      "@matrixai/*",
      "pino",
      "thread-stream",
      "bufferutil",
      "utf-8-validate",
    ],
    // The bundled CommonJS libraries require Node's built-ins: each ES module file gets a require of its own.
    banner: {
      js: 'import { createRequire as bundleRequire } from "node:module"; const require = bundleRequire(import.meta.url);',
    },
  });
}

/** The browser console: one Vite build (Preact JSX, uPlot) with hashed asset names under /console/. */
async function buildConsole(outDir) {
  const { build: viteBuild } = await import("vite");
  await viteBuild({
    root: path.join(root, WEB),
    base: "/console/",
    configFile: false,
    logLevel: "warn",
    oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
    build: {
      outDir,
      emptyOutDir: true,
      sourcemap: true,
      target: "es2022",
      reportCompressedSize: false,
      chunkSizeWarningLimit: 1024,
    },
  });
}
