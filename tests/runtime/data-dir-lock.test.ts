// The data directory's lock (one agent per directory) where the directory's path is longer than a Unix socket
// address holds (about 107 bytes): the lock stays in the directory, a second agent is refused, and the lock an agent
// killed with SIGKILL left behind does not keep the next one from starting.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { lockDataDir } from "../../runtime/data-dir-lock.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A data directory whose lock's path is well past a socket address's length. */
function longDataDir(): string {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), "lock-"));
  dirs.push(top);
  const dir = path.join(top, "a-data-directory-with-a-long-name".repeat(3), "data");
  fs.mkdirSync(dir, { recursive: true });
  expect(Buffer.byteLength(path.join(dir, "agent.lock"))).toBeGreaterThan(108);
  return dir;
}

it("keeps the lock of a long data directory's path inside it, and refuses a second holder", async () => {
  const dir = longDataDir();
  const lock = await lockDataDir(dir);
  expect(fs.statSync(path.join(dir, "agent.lock")).isSocket()).toBe(true);
  await expect(lockDataDir(dir)).rejects.toThrow(`another edge agent (PID ${process.pid}) is using the data directory`);
  await lock.release();
  const again = await lockDataDir(dir);
  await again.release();
});

it("takes over the lock an agent killed with SIGKILL left in a long data directory", async () => {
  const dir = longDataDir();
  // A process that takes the lock as the agent does (the compiled module) and dies holding it: the socket file
  // stays, nobody listens.
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { lockDataDir } from ${JSON.stringify(path.resolve("dist/runtime/data-dir-lock.js"))};
       await lockDataDir(process.argv[1]); process.stdout.write("locked\\n"); setInterval(() => {}, 1000);`,
      dir,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d) => String(d).includes("locked") && resolve());
    child.once("exit", (code) => reject(new Error(`the holder exited (${code})`)));
  });
  await expect(lockDataDir(dir)).rejects.toThrow(`PID ${child.pid}`);
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
  expect(fs.existsSync(path.join(dir, "agent.lock"))).toBe(true);
  const lock = await lockDataDir(dir);
  await lock.release();
});
