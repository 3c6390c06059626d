import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../cloud/config.js";
import { startCloudPeer } from "../../../cloud/server.js";
import { bodyText } from "./mailbox.js";

describe("secrets stay out of logs and list responses", () => {
  it("logs no password, API token or verification token at debug level", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const config = loadConfig(
      { listen: "127.0.0.1:0", dataDir, logLevel: "debug", adminPassword: "Admin-password-1" },
      {},
    );
    const peer = await startCloudPeer(config, { logDestination: sink as any });
    try {
      const { createToken } = await import("../../../cloud/accounts/service/tokens.js");
      const admin = (await peer.svc.accounts.findUserByName("admin"))!;
      const adminTok = (await createToken(peer.svc, admin.uuid, { name: "log" })).token!;
      const call = (p: string, init: RequestInit & { json?: unknown } = {}) =>
        fetch(`${peer.url}/api${p}`, {
          ...init,
          headers: { "X-Intdash-Token": adminTok, "content-type": "application/json" },
          body: init.json === undefined ? undefined : JSON.stringify(init.json),
        }).then(async (r) => ({ status: r.status, body: (await r.json().catch(() => undefined)) as any }));
      const u = await call("/auth/users", {
        method: "POST",
        json: { name: "zoe", role_uuids: [], email: "zoe@example.com" },
      });
      const temp = u.body.password.temporary_password as string;
      const t = await call(`/auth/users/${u.body.uuid}/tokens`, { method: "POST", json: { name: "z" } });
      const outbox = path.join(dataDir, "outbox");
      const mail = bodyText(fs.readFileSync(path.join(outbox, fs.readdirSync(outbox)[0]!), "utf8"));
      const link = mail.match(/(http:\/\/\S+verified\?\S+)/)![1]!;
      const verification = decodeURIComponent(link.split("verification_token=")[1]!);
      expect((await fetch(link)).status).toBe(200);
      await fetch(`${peer.url}/api/auth/users/me/password`, {
        method: "PUT",
        headers: { "X-Intdash-Token": t.body.token, "content-type": "application/json" },
        body: JSON.stringify({ password: "Brand-new-pw-1", old_password: temp }),
      });
      await call("/auth/users/x", { method: "PATCH", json: { password: "Admin-password-1" } });
      const all = lines.join("");
      expect(all).toContain('"msg":"request"');
      for (const secret of [adminTok, t.body.token, temp, verification, "Brand-new-pw-1", "Admin-password-1"])
        expect(all).not.toContain(secret);
      const list = await call(`/auth/users/${u.body.uuid}/tokens`);
      expect(JSON.stringify(list.body)).not.toContain(t.body.token);
      const users = await call("/auth/users");
      expect(JSON.stringify(users.body)).not.toContain(temp);
      expect(JSON.stringify(users.body)).not.toMatch(/scrypt\$/);
    } finally {
      await peer.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
