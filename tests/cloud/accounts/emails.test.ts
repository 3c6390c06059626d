import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { TS, adminToken, caller, createUser, expectError, tokenOf, type Call } from "./helpers.js";
import { bodyText, startMailbox } from "./mailbox.js";

const linkIn = (text: string) => text.match(/(http:\/\/\S+\/api\/auth\/users\/emails\/verified\?\S+)/)![1]!;
const tokenIn = (text: string) => text.match(/verification token \(e-mail id (\d+)\):\r?\n(\S+)/)!;

describe("e-mails over real SMTP", () => {
  let peer: TestPeer;
  let mailbox: Awaited<ReturnType<typeof startMailbox>>;
  let admin: Call;
  beforeAll(async () => {
    mailbox = await startMailbox();
    peer = await startTestPeer({ config: { smtpUrl: mailbox.url, mailFrom: "peer@test.local" } });
    admin = caller(peer, await adminToken(peer));
  });
  afterAll(async () => {
    await peer.stop();
    await mailbox.close();
  });

  it("sends a confirmation mail on user creation; its link verifies the address once", async () => {
    const u = await createUser(admin, "dora", { email: "dora@example.com" });
    const mail = await mailbox.nth(1);
    expect(mail.to).toEqual(["dora@example.com"]);
    expect(mail.raw).toMatch(/^From: peer@test\.local/m);
    expect(mail.text).toContain('"dora"');
    expect(mail.text).not.toContain(u.password.temporary_password);
    const link = linkIn(mail.text);
    expect(link).toContain(`email_id=${u.emails[0].id}`);
    const res = await fetch(link);
    expect(res.status).toBe(200);
    const email: any = await res.json();
    expect(email).toEqual({
      id: u.emails[0].id,
      address: "dora@example.com",
      verified: true,
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
    });
    const again = await fetch(link);
    expect(again.status).toBe(400);
    expect(((await again.json()) as any).type).toBe("invalid_request");
    expect((await admin(`/auth/users/${u.uuid}`)).body.emails[0].verified).toBe(true);
  });

  it("sets, verifies by id + token, changes (unverified + new mail) and deletes an address", async () => {
    const u = await createUser(admin, "emil");
    const before = mailbox.received.length;
    const created = await admin(`/auth/users/${u.uuid}/emails`, {
      method: "POST",
      json: { ADDRESS: "emil@example.com" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ address: "emil@example.com", verified: false });
    const mail = await mailbox.nth(before + 1);
    const [, id, token] = tokenIn(mail.text);
    expect(Number(id)).toBe(created.body.id);
    // Another user's e-mail id with this token is refused.
    const wrong = await admin(`/auth/users/${u.uuid}/emails/999999/verified`, {
      method: "PUT",
      json: { verification_token: token },
    });
    expectError(wrong, 404);
    const ok = await admin(`/auth/users/${u.uuid}/emails/${id}/verified`, {
      method: "PUT",
      json: { verification_token: token },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.verified).toBe(true);
    expectError(
      await admin(`/auth/users/${u.uuid}/emails/${id}/verification`, { method: "PUT" }),
      400,
      "invalid_request",
    );
    const changed = await admin(`/auth/users/${u.uuid}/emails/${id}`, {
      method: "PATCH",
      json: { address: "emil2@example.com" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: Number(id), address: "emil2@example.com", verified: false });
    const mail2 = await mailbox.nth(before + 2);
    expect(mail2.to).toEqual(["emil2@example.com"]);
    const sent = await admin(`/auth/users/${u.uuid}/emails/${id}/verification`, { method: "PUT" });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({
      email_id: Number(id),
      expired_at: expect.stringMatching(TS),
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
    });
    expect(Date.parse(sent.body.expired_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    const mail3 = await mailbox.nth(before + 3);
    // The newest token verifies by token alone (no sign-in).
    const [, , token3] = tokenIn(mail3.text);
    const byToken = await caller(peer)("/auth/users/emails/verified", {
      method: "PUT",
      json: { verification_token: token3 },
    });
    expect(byToken.status).toBe(200);
    expect(byToken.body).toMatchObject({ address: "emil2@example.com", verified: true });
    // The token of the earlier mail for this address died when a newer verification was used? It stays single-use and its own:
    const [, , token2] = tokenIn(mail2.text);
    expect(
      (await caller(peer)("/auth/users/emails/verified", { method: "PUT", json: { verification_token: token2 } }))
        .status,
    ).toBe(200);
    expectError(
      await caller(peer)("/auth/users/emails/verified", { method: "PUT", json: { verification_token: token2 } }),
      400,
    );
    expectError(
      await admin(`/auth/users/${u.uuid}/emails`, { method: "POST", json: { address: "EMIL2@example.com" } }),
      409,
      "conflict",
    );
    expect((await admin(`/auth/users/${u.uuid}/emails/${id}`, { method: "DELETE" })).status).toBe(204);
    expectError(await admin(`/auth/users/${u.uuid}/emails/${id}`, { method: "DELETE" }), 404);
  });

  it("a changed address voids the tokens sent to the old one", async () => {
    const u = await createUser(admin, "fritz", { email: "fritz@example.com" });
    const n = mailbox.received.length;
    const first = await mailbox.nth(n);
    const [, id, oldToken] = tokenIn(first.text);
    await admin(`/auth/users/${u.uuid}/emails/${id}`, { method: "PATCH", json: { address: "fritz-new@example.com" } });
    expectError(
      await caller(peer)("/auth/users/emails/verified", { method: "PUT", json: { verification_token: oldToken } }),
      400,
    );
  });

  it("manages the own e-mail addresses under /users/me", async () => {
    const u = await createUser(admin, "gina");
    const me = caller(peer, await tokenOf(peer, admin, u));
    const n = mailbox.received.length;
    const c = await me("/auth/users/me/emails", { method: "POST", json: { address: "gina@example.com" } });
    expect(c.status).toBe(201);
    const [, , tok] = tokenIn((await mailbox.nth(n + 1)).text);
    const s = await me(`/auth/users/me/emails/${c.body.id}/verification`, { method: "PUT" });
    expect(s.status).toBe(200);
    expect(s.body.email_id).toBe(c.body.id);
    const v = await me(`/auth/users/me/emails/${c.body.id}/verified`, {
      method: "PUT",
      json: { verification_token: tok },
    });
    expect(v.status).toBe(200);
    expect(v.body.verified).toBe(true);
    const p = await me(`/auth/users/me/emails/${c.body.id}`, {
      method: "PATCH",
      json: { address: "gina2@example.com" },
    });
    expect(p.body).toMatchObject({ address: "gina2@example.com", verified: false });
    expect((await me(`/auth/users/me/emails/${c.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await me("/auth/users/me")).body.emails).toEqual([]);
  });
});

describe("e-mails into the outbox (no SMTP configured)", () => {
  it("writes each mail as an .eml file under <data>/outbox", async () => {
    const peer = await startTestPeer();
    try {
      const admin = caller(peer, await adminToken(peer));
      const u = await createUser(admin, "hans", { email: "hans@example.com" });
      const dir = path.join(peer.dataDir, "outbox");
      const files = fs.readdirSync(dir).filter((f) => f.endsWith(".eml"));
      expect(files).toHaveLength(1);
      const raw = fs.readFileSync(path.join(dir, files[0]!), "utf8");
      expect(raw).toMatch(/^To: hans@example\.com$/m);
      const link = linkIn(bodyText(raw));
      expect((await fetch(link)).status).toBe(200);
      expect((await admin(`/auth/users/${u.uuid}`)).body.emails[0].verified).toBe(true);
    } finally {
      await peer.stop();
    }
  });
});

describe("e-mails with an unreachable SMTP server", () => {
  it("still creates the user and the address; the failed mail is logged, not fatal", async () => {
    const net = await import("node:net");
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const peer = await startTestPeer({ config: { smtpUrl: `smtp://127.0.0.1:${port}` } });
    try {
      const admin = caller(peer, await adminToken(peer));
      const u = await createUser(admin, "ivo", { email: "ivo@example.com" });
      expect(u.emails[0].verified).toBe(false);
      const sent = await admin(`/auth/users/${u.uuid}/emails/${u.emails[0].id}/verification`, { method: "PUT" });
      expect(sent.status).toBe(200);
    } finally {
      await peer.stop();
    }
  });
});

describe("verification tokens expire and are stored only as digests", () => {
  it("refuses an expired token; a fresh mail's token works; no token is in the database in clear", async () => {
    const peer = await startTestPeer();
    try {
      const admin = caller(peer, await adminToken(peer));
      const u = await createUser(admin, "jana", { email: "jana@example.com" });
      const dir = path.join(peer.dataDir, "outbox");
      const mails = () =>
        fs
          .readdirSync(dir)
          .sort()
          .map((f) => bodyText(fs.readFileSync(path.join(dir, f), "utf8")));
      const [, id, token] = tokenIn(mails()[0]!);
      // Let the 24 h pass.
      await peer.svc.db.run("UPDATE email_verifications SET expired_at = ? WHERE email_id = ?", [
        "2000-01-01T00:00:00Z",
        Number(id),
      ]);
      const late = await admin(`/auth/users/${u.uuid}/emails/${id}/verified`, {
        method: "PUT",
        json: { verification_token: token },
      });
      expectError(late, 400, "invalid_request");
      expect(late.body.properties).toEqual({ verification_token: "invalid or expired" });
      expect((await fetch(linkIn(mails()[0]!))).status).toBe(400);
      expect((await admin(`/auth/users/${u.uuid}/emails/${id}/verification`, { method: "PUT" })).status).toBe(200);
      const [, , fresh] = tokenIn(mails()[1]!);
      expect(
        (
          await admin(`/auth/users/${u.uuid}/emails/${id}/verified`, {
            method: "PUT",
            json: { verification_token: fresh },
          })
        ).status,
      ).toBe(200);
      const rows = await peer.svc.db.all<{ token_digest: string }>("SELECT token_digest FROM email_verifications");
      expect(rows.map((r) => r.token_digest)).toEqual(
        expect.arrayContaining([createHash("sha256").update(fresh).digest("hex")]),
      );
      const stored = ["cloud.db", "cloud.db-wal"]
        .filter((f) => fs.existsSync(path.join(peer.dataDir, f)))
        .map((f) => fs.readFileSync(path.join(peer.dataDir, f)));
      for (const secret of [token, fresh]) for (const file of stored) expect(file.includes(secret)).toBe(false);
    } finally {
      await peer.stop();
    }
  });
});
