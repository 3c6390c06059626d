// Test harness: a real cloud peer on an ephemeral port with its own temp data directory.
import fs from "node:fs";
import type pino from "pino";
import os from "node:os";
import path from "node:path";
import { loadConfig, type ConfigInput } from "../../cloud/config.js";
import { startCloudPeer, type CloudPeer } from "../../cloud/server.js";
import { dropTestDatabase, testDatabaseFor } from "../support/test-database.js";

export interface TestPeer extends CloudPeer {
  dataDir: string;
  /** fetch relative to the peer's /api base (or another server's: `base`). */
  api(p: string, init?: RequestInit & { json?: unknown }, base?: string): Promise<Response>;
  stop(): Promise<void>;
}

export async function startTestPeer(
  opts: { dataDir?: string; config?: ConfigInput; logDestination?: pino.DestinationStream } = {},
): Promise<TestPeer> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
  const database = await testDatabaseFor(dataDir);
  const config = loadConfig(
    { listen: "127.0.0.1:0", dataDir, logLevel: "silent", adminPassword: "Admin-password-1", database, ...opts.config },
    {},
  );
  const peer = await startCloudPeer(config, { logDestination: opts.logDestination });
  const api = (p: string, init: RequestInit & { json?: unknown } = {}, base = peer.url) => {
    const headers = new Headers(init.headers);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(init.json);
    }
    return fetch(`${base}/api${p}`, { ...init, headers, body });
  };
  return {
    ...peer,
    dataDir,
    api,
    async stop() {
      await peer.close();
      if (!opts.dataDir) {
        fs.rmSync(dataDir, { recursive: true, force: true });
        await dropTestDatabase(dataDir);
      }
    },
  };
}
