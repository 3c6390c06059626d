// S17 of docs/security.md (RFC 9700 4.3, credential leakage via logs): a peer logging at trace level, its log read
// back whole after sign-ins, client registration, token grants and revocation.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../cloud/config.js";
import { startCloudPeer } from "../../../cloud/server.js";
import { bearer, form } from "./helpers.js";

describe("RFC 9700 security items: logs", () => {
  it("S17 no tokens, secrets, codes or passwords in the logs, even at debug level", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "oauth-logs-"));
    const config = loadConfig(
      { listen: "127.0.0.1:0", dataDir, logLevel: "trace", adminPassword: "Admin-password-1" },
      {},
    );
    const logged = await startCloudPeer(config, { logDestination: sink as never });
    try {
      const api = (p: string, init?: RequestInit) => fetch(`${logged.url}/api${p}`, init);
      const t: any = await (
        await api(
          "/auth/oauth2/token",
          form({ grant_type: "password", username: "admin", password: "Admin-password-1" }),
        )
      ).json();
      const c: any = await (
        await api("/auth/users/me/clients", {
          method: "POST",
          headers: { ...bearer(t.access_token), "content-type": "application/json" },
          body: JSON.stringify({ name: "l", grant_type: "client_credentials" }),
        })
      ).json();
      const cc: any = await (
        await api(
          "/auth/oauth2/token",
          form({ grant_type: "client_credentials", client_id: c.client_id, client_secret: c.client_secret }),
        )
      ).json();
      await api("/auth/oauth2/token", form({ grant_type: "refresh_token", refresh_token: t.refresh_token }));
      await api("/auth/oauth2/revocation", form({ client_id: "first-party", token: cc.access_token }));
      await api("/auth/users/me", { headers: bearer(cc.access_token) });
      const all = lines.join("\n");
      expect(lines.length).toBeGreaterThan(3);
      for (const secret of [
        "Admin-password-1",
        t.access_token,
        t.refresh_token,
        c.client_secret,
        cc.access_token,
        t.access_token.split(".")[2],
      ])
        expect(all).not.toContain(secret);
    } finally {
      await logged.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
