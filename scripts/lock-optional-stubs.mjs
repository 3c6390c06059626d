// The registry mirror used here lacks some other-platform optional packages
// (e.g. @matrixai/quic-darwin-arm64), so `npm install` leaves them out of the
// lock file and `npm ci` then refuses the lock as out of sync. This adds an
// entry for each missing optional dependency, marked with its os/cpu, so npm ci
// skips it on platforms that do not match without ever fetching it.
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const pkgs = lock.packages;
const guess = (name) => {
  const os = ["darwin", "linux", "win32", "freebsd", "android"].find((o) => name.includes(o));
  const cpu = ["arm64", "x64", "arm", "ia32", "universal"].find((c) => name.includes(`-${c}`));
  return { os, cpu: cpu === "universal" ? ["x64", "arm64"] : cpu ? [cpu] : undefined };
};
let added = 0;
for (const [key, entry] of Object.entries(pkgs)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = key === "" ? "node_modules/" : `${key}/node_modules/`;
    if (pkgs[`${base}${dep}`] || pkgs[`node_modules/${dep}`]) continue;
    const { os, cpu } = guess(dep);
    if (!os) continue; // only platform packages are safe to stub
    pkgs[`node_modules/${dep}`] = { version, optional: true, ...(cpu ? { cpu } : {}), os: [os] };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(pkgs).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(path, JSON.stringify(lock, null, 2) + "\n");
console.log(`lock-optional-stubs: added ${added} entries`);
