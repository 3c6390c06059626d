// `npm run package:deb [-- --out DIR] [--arch amd64|arm64]`: Debian packages `edge-agent` and `cloud-peer` for this
// machine's architecture (or, with --arch, the agent's for another: scripts/deb-cross.mjs), made from dist/ (built first) and the installed node_modules with dpkg-deb. Each package holds
// only what its commands import: the files of dist/ they reach (esbuild's import graph) and the npm packages
// those need (the lock file's dependency tree), so the agent carries no sqlite3, no PostgreSQL driver and no
// console. Nothing is compiled on the device: native modules come as the prebuilt binaries npm installed here.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { isBuiltin } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { ARCHES, fetchedPackage, fitsTarget, foreignBinaries, runsOnTarget } from "./deb-cross.mjs";
import { PACKAGES, maintainerScripts } from "./deb-packages.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    out: { type: "string", default: path.join(root, "dist-deb") },
    only: { type: "string" },
    fast: { type: "boolean", default: false },
    arch: { type: "string" },
  },
});
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")).packages;
const HOST = Object.keys(ARCHES).find((a) => ARCHES[a].node === process.arch);
const ARCH = args.arch ?? HOST;
if (!ARCHES[ARCH]) throw new Error(`package-deb: no Debian architecture for ${args.arch ?? process.arch}`);
const TARGET = ARCHES[ARCH].node;
const CROSS = ARCH !== HOST;
// The cloud's sqlite3 has no prebuilt binary on the npm registry: its package is built on a machine of its own
// architecture.
if (CROSS && args.only !== "edge-agent")
  throw new Error(`package-deb: --arch ${ARCH} builds the agent only: add --only edge-agent`);

/** The dist/ files the entries reach, and the npm packages they import (static and literal dynamic imports). */
async function importGraph(entries) {
  const result = await build({
    entryPoints: entries.map((e) => path.join(root, "dist", e)),
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
    outdir: os.tmpdir(),
  });
  const files = Object.keys(result.metafile.inputs).map((f) =>
    path.relative(path.join(root, "dist"), path.resolve(root, f)),
  );
  const bare = new Set();
  // Node's own modules, also when named without "node:" (as the agent's bundled CommonJS libraries do).
  for (const input of Object.values(result.metafile.inputs))
    for (const imp of input.imports)
      if (imp.external && !isBuiltin(imp.path))
        bare.add(imp.path.startsWith("@") ? imp.path.split("/").slice(0, 2).join("/") : imp.path.split("/")[0]);
  return { files, packages: [...bare].sort() };
}

/** Where npm put `name` for a package at `from` (a lock-file key): its own node_modules, then each parent's. */
function resolveInLock(from, name) {
  for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf("/node_modules/")))) {
    const key = `${dir ? `${dir}/` : ""}node_modules/${name}`;
    if (lock[key]) return key;
    if (!dir) return undefined;
  }
}

/**
 * Where the package of a lock-file key is for the target: this checkout's node_modules, or (another architecture's
 * platform package) the registry's copy; undefined where it is not there or cannot run on the target.
 */
function sourceOf(key, optional) {
  const entry = lock[key];
  if (!fitsTarget(entry, TARGET)) return undefined;
  const installed = path.join(root, key);
  if (CROSS && entry.cpu && !fs.existsSync(installed))
    return fetchedPackage(key.slice(key.lastIndexOf("node_modules/") + 13), entry.version);
  if (!fs.existsSync(installed)) return undefined;
  if (CROSS && !runsOnTarget(installed, entry, lock, TARGET)) {
    const name = key.slice(key.lastIndexOf("node_modules/") + 13);
    if (optional) return undefined;
    throw new Error(`package-deb: ${name} has no prebuilt binary for linux-${TARGET}`);
  }
  return installed;
}
const sources = new Map();

/** Every package the roots need, by lock-file key (optional ones only where they are there for the target). */
function dependencyClosure(roots) {
  const seen = new Set();
  const visit = (key, optional) => {
    if (!key || seen.has(key)) return;
    const source = sourceOf(key, optional);
    if (!source) return;
    sources.set(key, source);
    seen.add(key);
    const entry = lock[key];
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies }))
      visit(resolveInLock(key, name), !entry.dependencies?.[name]);
  };
  for (const name of roots) {
    const key = resolveInLock("", name);
    if (!key && !manifest.optionalDependencies?.[name])
      throw new Error(`package-deb: ${name} is imported but not installed`);
    visit(key, Boolean(manifest.optionalDependencies?.[name]));
  }
  return [...seen].sort();
}

// What running never reads: type declarations, source maps, documentation, tests and examples of dependencies.
const NOT_RUN = /(\.d\.[cm]?ts|\.map|\.md|\.markdown)$|\/(test|tests|__tests__|docs|example|examples|\.github)$/i;

function copy(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { recursive: true, dereference: true, filter: (src) => src === from || !NOT_RUN.test(src) });
}

async function makePackage(pkg) {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), `deb-${pkg.name}-`));
  try {
    const lib = path.join(stage, "usr", "lib", pkg.name);
    const graph = await importGraph(pkg.entries);
    const extra = pkg.packages ?? [];
    for (const f of graph.files) copy(path.join(root, "dist", f), path.join(lib, "dist", f));
    for (const f of pkg.distDirs ?? []) copy(path.join(root, "dist", f), path.join(lib, "dist", f));
    // Type packages are never loaded at run time.
    for (const key of dependencyClosure([...graph.packages, ...extra]))
      if (!key.includes("node_modules/@types/")) copy(sources.get(key), path.join(lib, key));
    const foreign = foreignBinaries(lib, ARCHES[ARCH].elfMachine);
    if (foreign.length > 0)
      throw new Error(`package-deb: native modules of another architecture: ${foreign.join(", ")}`);
    for (const bin of pkg.bins) copy(path.join(root, "bin", `${bin}.mjs`), path.join(lib, "bin", `${bin}.mjs`));
    copy(path.join(root, "bin", "compiled.mjs"), path.join(lib, "bin", "compiled.mjs"));
    // ESM: the package's own type, and its version for --version.
    fs.writeFileSync(
      path.join(lib, "package.json"),
      `${JSON.stringify({ name: pkg.name, version: manifest.version, type: "module", private: true }, null, 2)}\n`,
    );
    fs.mkdirSync(path.join(stage, "usr", "bin"), { recursive: true });
    for (const bin of pkg.bins)
      fs.symlinkSync(`../lib/${pkg.name}/bin/${bin}.mjs`, path.join(stage, "usr", "bin", bin));
    // The systemd unit, its commands under /usr/bin, and the /etc/default example as a conffile.
    const unit = fs
      .readFileSync(path.join(root, "deploy", `${pkg.name}.service`), "utf8")
      .replaceAll("/usr/local/bin/", "/usr/bin/")
      .replace(/^Documentation=.*$/m, `Documentation=file:/usr/share/doc/${pkg.name}/README.md`);
    copy(path.join(root, "deploy", `${pkg.name}.env`), path.join(stage, "etc", "default", pkg.name));
    fs.mkdirSync(path.join(stage, "lib", "systemd", "system"), { recursive: true });
    fs.writeFileSync(path.join(stage, "lib", "systemd", "system", `${pkg.name}.service`), unit);
    for (const doc of ["README.md", ...(pkg.docs ?? [])])
      copy(path.join(root, doc), path.join(stage, "usr", "share", "doc", pkg.name, path.basename(doc)));

    const debian = path.join(stage, "DEBIAN");
    fs.mkdirSync(debian);
    const size = Math.ceil(
      Number(execFileSync("du", ["-sk", "--exclude=DEBIAN", stage], { encoding: "utf8" }).split("\t")[0]),
    );
    fs.writeFileSync(
      path.join(debian, "control"),
      [
        `Package: ${pkg.name}`,
        `Version: ${manifest.version}`,
        `Architecture: ${ARCH}`,
        "Maintainer: measure-edge-cloud developers <maintainers@measure-edge-cloud.invalid>",
        `Installed-Size: ${size}`,
        `Depends: ${pkg.depends}`,
        "Section: net",
        "Priority: optional",
        `Description: ${pkg.summary}`,
        ...pkg.description.map((l) => ` ${l}`),
        "",
      ].join("\n"),
    );
    fs.writeFileSync(path.join(debian, "conffiles"), `/etc/default/${pkg.name}\n`);
    for (const [name, text] of Object.entries(maintainerScripts(pkg)))
      fs.writeFileSync(path.join(debian, name), text, { mode: 0o755 });
    const file = path.join(args.out, `${pkg.name}_${manifest.version}_${ARCH}.deb`);
    // --root-owner-group: every file root's, whoever builds (the data folders are made by postinst).
    // xz for the packages users install; --fast (gzip, level 1) where only a test installs them.
    const compression = args.fast ? ["-Zgzip", "-z1"] : ["-Zxz"];
    execFileSync("dpkg-deb", ["--root-owner-group", ...compression, "--build", stage, file], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    return file;
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

execFileSync(process.execPath, [path.join(root, "scripts", "build.mjs"), "--quiet"], { stdio: "inherit" });
fs.mkdirSync(args.out, { recursive: true });
for (const pkg of PACKAGES.filter((p) => !args.only || p.name === args.only)) {
  const file = await makePackage(pkg);
  console.log(path.relative(process.cwd(), file) || file);
}
