// Failed password sign-ins slow a guesser down instead of locking the account for good: past CLOUD_LOCKOUT_THRESHOLD
// failures of one user name (known or not, with the same answers) or CLOUD_SIGN_IN_ADDRESS_FAILURES of one client
// address, each further attempt waits (429 with Retry-After), the wait doubling; a success or a quiet period resets it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConfigInput } from "../../../cloud/config.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { ADMIN_PASSWORD, adminToken, createUser, form } from "./helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function grantOf(peer: TestPeer) {
  return async (username: string, password: string, forwardedFor?: string) => {
    const init = form({ grant_type: "password", username, password });
    const r = await peer.api("/auth/oauth2/token", {
      ...init,
      headers: { ...init.headers, ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}) },
    });
    const body: any = await r.json();
    return { status: r.status, body, retryAfter: r.headers.get("retry-after") };
  };
}

async function withPeer<T>(config: ConfigInput, fn: (peer: TestPeer) => Promise<T>): Promise<T> {
  const peer = await startTestPeer({ config });
  try {
    return await fn(peer);
  } finally {
    await peer.stop();
  }
}

/** Waits out a 429's Retry-After. */
const waitOut = (r: { retryAfter: string | null }) => sleep(Number(r.retryAfter) * 1000 + 100);

// Waits of several seconds, so that a loaded machine's slow requests still arrive within them.
const WAIT = { signInWaitSeconds: 3 };

describe("password sign-in back-off", () => {
  let peer: TestPeer;
  let admin: string;
  let grant: ReturnType<typeof grantOf>;
  beforeAll(async () => {
    peer = await startTestPeer({ config: WAIT });
    admin = await adminToken(peer);
    grant = grantOf(peer);
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("makes the sixth attempt wait instead of locking the account: 429 with Retry-After, then the right password works", async () => {
    const victim = await createUser(peer, admin);
    for (let i = 0; i < 5; i++) expect((await grant(victim.name, "Wrong-password-1")).status).toBe(400);
    const waiting = await grant(victim.name, victim.password);
    expect(waiting.status).toBe(429);
    expect(Number(waiting.retryAfter)).toBeGreaterThan(0);
    expect(Number(waiting.retryAfter)).toBeLessThanOrEqual(3);
    expect(waiting.body).toMatchObject({
      error: "temporarily_unavailable",
      type: expect.any(String),
      title: expect.any(String),
    });
    await waitOut(waiting);
    expect((await grant(victim.name, victim.password)).status).toBe(200);
    // A success resets the count: the next failure is a plain invalid_grant again.
    expect((await grant(victim.name, "Wrong-password-1")).status).toBe(400);
    expect((await grant(victim.name, victim.password)).status).toBe(200);
  });

  it("doubles the wait with each further failure", async () => {
    const victim = await createUser(peer, admin);
    for (let i = 0; i < 5; i++) await grant(victim.name, "Wrong-password-1");
    await waitOut(await grant(victim.name, "Wrong-password-1"));
    expect((await grant(victim.name, "Wrong-password-1")).status).toBe(400);
    const second = await grant(victim.name, "Wrong-password-1");
    expect(second.status).toBe(429);
    expect(Number(second.retryAfter)).toBeGreaterThan(3);
    expect(Number(second.retryAfter)).toBeLessThanOrEqual(6);
  });

  it("answers an unknown user name exactly as a known one, so the wait tells nothing of which names exist", async () => {
    // A peer of its own: this file's other failures from the same address would count into its back-off.
    await withPeer(WAIT, async (p) => {
      const known = await createUser(p, await adminToken(p));
      const g = grantOf(p);
      const seen = async (name: string) => {
        const out: unknown[] = [];
        for (let i = 0; i < 6; i++) {
          const r = await g(name, "Wrong-password-1");
          out.push([r.status, r.body, r.retryAfter === null]);
        }
        return out;
      };
      const unknown = await seen("no-such-user-anywhere");
      expect(unknown.at(-1)).toEqual([429, expect.anything(), false]);
      expect(unknown).toEqual(await seen(known.name));
    });
  });

  it("keeps the super user's right password working after any number of failures, once the wait is over", async () => {
    await withPeer({ signInWaitSeconds: 2, signInMaxWaitSeconds: 2 }, async (p) => {
      const g = grantOf(p);
      for (let i = 0; i < 12; i++) await g("admin", `Wrong-${i}`);
      const w = await g("admin", ADMIN_PASSWORD);
      expect(w.status).toBe(429);
      expect(Number(w.retryAfter)).toBeLessThanOrEqual(2);
      await waitOut(w);
      expect((await g("admin", ADMIN_PASSWORD)).status).toBe(200);
    });
  });

  it("throttles one client address across user names, and no other address", async () => {
    await withPeer({ ...WAIT, trustedProxies: "127.0.0.0/8, ::1", signInAddressFailures: 4 }, async (p) => {
      const g = grantOf(p);
      for (let i = 0; i < 4; i++) expect((await g(`guess-${i}`, "Wrong-password-1", "203.0.113.7")).status).toBe(400);
      // The guesser's address waits, whatever name it tries, the right password included.
      const w = await g("admin", ADMIN_PASSWORD, "203.0.113.7");
      expect(w.status).toBe(429);
      expect(Number(w.retryAfter)).toBeGreaterThan(0);
      // Someone else is not locked out.
      expect((await g("admin", ADMIN_PASSWORD, "203.0.113.8")).status).toBe(200);
    });
  });

  it("forgets failures after a quiet period", async () => {
    await withPeer({ ...WAIT, lockoutThreshold: 2, signInQuietSeconds: 2 }, async (p) => {
      const g = grantOf(p);
      await g("admin", "Wrong-1");
      await g("admin", "Wrong-2");
      expect((await g("admin", "Wrong-3")).status).toBe(429);
      // Within the 3 s wait, but past the 2 s quiet period: the count is gone.
      await sleep(2100);
      expect((await g("admin", "Wrong-4")).status).toBe(400);
      expect((await g("admin", ADMIN_PASSWORD)).status).toBe(200);
    });
  });
});
