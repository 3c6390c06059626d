// Debian packages for another architecture than the build machine's (`npm run package:deb -- --arch arm64`):
// npm installed this machine's platform packages only, so those of the target (e.g. @lmdb/lmdb-linux-arm64) are
// fetched from the registry with `npm pack` (cached outside the checkout) at the version the lock file names.
// A native module with neither a prebuilt binary for the target nor a platform package is left out when it is
// optional (bufferutil: ws falls back to JavaScript) and refused otherwise: nothing is compiled for the device.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Debian architecture -> Node's process.arch, and the ELF machine of its native modules. */
export const ARCHES = {
  amd64: { node: "x64", elfMachine: 62 },
  arm64: { node: "arm64", elfMachine: 183 },
};

const CACHE = path.join(
  process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"),
  "measure-edge-cloud",
  "npm-platform-packages",
);

/** Whether a lock-file entry installs on linux (glibc) of the target architecture. */
export function fitsTarget(entry, nodeArch) {
  return (
    (!entry.cpu || entry.cpu.includes(nodeArch)) &&
    (!entry.os || entry.os.includes("linux")) &&
    (!entry.libc || entry.libc.includes("glibc"))
  );
}

/** The folder of `name@version` unpacked from the registry (fetched once). */
export function fetchedPackage(name, version) {
  const dir = path.join(CACHE, `${name.replace("/", "+")}@${version}`);
  if (fs.existsSync(path.join(dir, "package.json"))) return dir;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "deb-cross-"));
  try {
    const file = execFileSync("npm", ["pack", `${name}@${version}`, "--pack-destination", tmp, "--silent"], {
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .at(-1);
    fs.mkdirSync(dir, { recursive: true });
    execFileSync("tar", ["-xzf", path.join(tmp, file), "-C", dir, "--strip-components=1"]);
    return dir;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Whether the installed package at `dir` can run on the target without compiling: no native build, a prebuilt
 * binary for linux-<arch> in its prebuilds/, or a platform package of the target among its optional dependencies.
 */
export function runsOnTarget(dir, entry, lock, nodeArch) {
  if (!fs.existsSync(path.join(dir, "binding.gyp"))) return true;
  if (fs.existsSync(path.join(dir, "prebuilds", `linux-${nodeArch}`))) return true;
  return Object.keys(entry.optionalDependencies ?? {}).some((name) => {
    const dep = lock[`node_modules/${name}`];
    return dep?.cpu?.includes(nodeArch) && fitsTarget(dep, nodeArch);
  });
}

/** Every native module (.node file) under `dir` built for another machine than `elfMachine`. */
export function foreignBinaries(dir, elfMachine) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".node")) continue;
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    const head = Buffer.alloc(20);
    const fd = fs.openSync(file, "r");
    fs.readSync(fd, head, 0, 20, 0);
    fs.closeSync(fd);
    // ELF header: e_machine at offset 18 (little-endian on both targets).
    if (head.readUInt32BE(0) === 0x7f454c46 && head.readUInt16LE(18) !== elfMachine) found.push(file);
  }
  return found;
}
