// The tests that install the Debian packages on this machine (dpkg -i ... dpkg --purge) take turns: two test files
// running side by side would install and purge the same package under each other. A lock directory holding the
// owner's pid; one left by a process that is gone is taken over.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { processAlive } from "../support/process-alive.js";

const LOCK = path.join(os.tmpdir(), "measure-edge-cloud-dpkg.lock");

/** Waits (up to `ms`) until this process holds the machine's package lock. */
export async function lockPackages(ms = 480_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      fs.writeFileSync(path.join(LOCK, "pid"), String(process.pid));
      return;
    } catch {
      const owner = Number(fs.readFileSync(path.join(LOCK, "pid"), { encoding: "utf8", flag: "a+" }) || "0");
      if (owner && !processAlive(owner)) fs.rmSync(LOCK, { recursive: true, force: true });
    }
    if (Date.now() > end) throw new Error(`${LOCK} still held after ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export function unlockPackages(): void {
  const pid = fs.readFileSync(path.join(LOCK, "pid"), { encoding: "utf8", flag: "a+" });
  if (pid === String(process.pid)) fs.rmSync(LOCK, { recursive: true, force: true });
}
