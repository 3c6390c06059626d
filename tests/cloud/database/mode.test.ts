// The database holds password hashes, signing keys and token digests: it is owner-only even in a data
// directory that others can read.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-mode-"));
let peer: TestPeer | undefined;
afterAll(async () => {
  await peer?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it("creates cloud.db and its WAL files with mode 0600 in a world-readable directory", async () => {
  fs.chmodSync(dir, 0o755);
  peer = await startTestPeer({ dataDir: dir });
  for (const f of ["cloud.db", "cloud.db-wal", "cloud.db-shm"]) {
    const p = path.join(dir, f);
    if (f === "cloud.db" || fs.existsSync(p))
      expect([f, (fs.statSync(p).mode & 0o777).toString(8)]).toEqual([f, "600"]);
  }
});
