// Every operation of the peer's OpenAPI document, fed schema-shaped bad requests (seeded, bounded), mostly with
// a super user's token, on a real cloud-peer process: no answer is a 5xx, the process lives on, and its
// open descriptors come back to where they were. FUZZ_SEED picks another run; a failure names its seed.
import { afterAll, beforeAll, expect, it } from "vitest";
import { requestFor, seeded } from "../../support/openapi-fuzz.js";
import { spawnPeerProcess, type PeerProcess } from "../iscp/peer-process.js";
import { modules } from "../../../cloud/modules.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
/** Requests per operation. */
const PER_OPERATION = 12;
/** Operations that stream until the client leaves, or upgrade the connection: only their status is read, then the client leaves. */
const STREAMING = /\/events$|\/iscp\/connect|\/ws\//;

let peer: PeerProcess | undefined;
beforeAll(async () => {
  peer = await spawnPeerProcess();
}, 120_000);
afterAll(async () => {
  await peer?.stop();
});

async function token(url: string): Promise<string> {
  const r = await fetch(`${url}/api/auth/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "password", username: "admin", password: "Admin-password-1" }),
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { access_token: string }).access_token;
}

// First: the fuzz run below may rename or lock the admin.
it("answers a NUL character in a path or a body with a 4xx, on either database", async () => {
  const p = peer!;
  const auth = { authorization: `Bearer ${await token(p.url)}` };
  const del = await fetch(`${p.url}/api/auth/clients/%00`, { method: "DELETE", headers: auth });
  expect(del.status).toBeGreaterThanOrEqual(400);
  expect(del.status).toBeLessThan(500);
  const made = await fetch(`${p.url}/api/auth/users`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "nul\u0000name" }),
  });
  expect(made.status).toBeLessThan(500);
  expect(p.child.exitCode).toBe(null);
}, 120_000);

it("answers every bent request of every operation without a 5xx, and leaves no descriptor behind", async () => {
  const p = peer!;
  const doc = (await (await fetch(`${p.url}/api/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const auth = await token(p.url);
  // Let the connections of the set-up close (keep-alive ends after 5 s) before counting.
  const settle = async (limit: number) => {
    await expect.poll(() => p.fds(), { timeout: 30_000, interval: 500 }).toBeLessThanOrEqual(limit);
    return p.fds();
  };
  const baseline = await settle(Number.MAX_SAFE_INTEGER);
  const rng = seeded(SEED);
  // Credentials drawn apart from the requests: most requests carry them, or the guard answers before the bad part is read.
  const withToken = seeded(SEED + 1);
  const failures: string[] = [];
  let sent = 0;
  for (const path of Object.keys(doc.paths).sort()) {
    for (const method of Object.keys(doc.paths[path]!)
      .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
      .sort()) {
      const streaming = STREAMING.test(path) && method === "get";
      for (let i = 0; i < PER_OPERATION; i++) {
        const req = requestFor(doc, path, method, rng);
        const headers = {
          ...req.headers,
          ...(withToken.chance(0.8) ? { authorization: `Bearer ${auth}` } : {}),
          connection: "close",
        };
        const leave = new AbortController();
        const r = await fetch(`${p.url}/api${req.path}`, {
          method: req.method,
          headers,
          body: req.body,
          signal: AbortSignal.any([leave.signal, AbortSignal.timeout(20_000)]),
        }).catch((e: unknown) => e as Error);
        sent++;
        if (r instanceof Error) failures.push(`${req.method} ${req.path.slice(0, 200)}: ${r.message}`);
        else {
          const text = streaming && r.status < 300 ? "" : await r.text();
          leave.abort();
          if (r.status >= 500)
            failures.push(
              `${req.method} ${req.path.slice(0, 200)} (${req.body?.slice(0, 200) ?? ""}) -> ${r.status} ${text.slice(0, 200)}`,
            );
        }
        expect(p.child.exitCode, `the peer exited (seed ${SEED})`).toBe(null);
      }
    }
  }
  // Beside the document: the sign-in page (hidden from it), the discovery documents outside /api, the console's
  // files and /metrics.
  const beside: Array<[string, string, Record<string, string>, string?]> = [
    ["GET", "/api/auth/oauth2/sign-in?client_id=%00&redirect_uri=x", {}],
    ["POST", "/api/auth/oauth2/sign-in", { "content-type": "application/x-www-form-urlencoded" }, "csrf=x&username="],
    ["POST", "/api/auth/oauth2/sign-in", { "content-type": "application/json" }, "{"],
    ["GET", "/.well-known/oauth-authorization-server/%00", {}],
    ["POST", "/.well-known/openid-configuration", { "content-type": "application/json" }, "[]"],
    ["GET", "/console/../../etc/passwd", {}],
    ["GET", "/metrics?x=%00", {}],
    ["DELETE", "/metrics", {}],
  ];
  for (const [method, path, headers, body] of beside) {
    const r = await fetch(`${p.url}${path}`, { method, headers: { ...headers, connection: "close" }, body });
    sent++;
    if (r.status >= 500) failures.push(`${method} ${path} -> ${r.status} ${(await r.text()).slice(0, 200)}`);
    else await r.body?.cancel();
  }
  expect(sent).toBeGreaterThan(300);
  expect(failures, `seed ${SEED}`).toEqual([]);
  // Descriptors: back to the baseline, give or take one of a background task.
  expect(await settle(baseline + 1)).toBeLessThanOrEqual(baseline + 1);
}, 600_000);

it("fuzzes every route the peer serves: the document lists each one but the sign-in page", async () => {
  const doc = (await (await fetch(`${peer!.url}/api/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const served = modules.flatMap((m) => m.routes ?? []).filter((r) => !r.hidden);
  expect(served.length).toBeGreaterThan(150);
  const missing = served
    .filter((r) => !doc.paths[r.path]?.[r.method.toLowerCase()])
    .map((r) => `${r.method} ${r.path}`);
  expect(missing).toEqual([]);
});
