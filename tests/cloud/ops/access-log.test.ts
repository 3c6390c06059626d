// The access log of a real cloud peer: one info line per request with the route template, status,
// duration and principal, and no token, secret or query string in any line.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../../../cloud/config.js";
import { startCloudPeer, type CloudPeer } from "../../../cloud/server.js";
import { createToken } from "../../../cloud/accounts/service/tokens.js";

let peer: CloudPeer;
let dataDir: string;
const lines: string[] = [];

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-peer-"));
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      cb();
    },
  });
  const config = loadConfig(
    { listen: "127.0.0.1:0", dataDir, logLevel: "info", adminPassword: "Admin-password-1" },
    {},
  );
  peer = await startCloudPeer(config, { logDestination: sink as never });
});
afterAll(async () => {
  await peer?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const requestLines = () => lines.map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.msg === "request");

it("writes one info line per request with the route template, status, duration and principal, and no secret", async () => {
  const admin = (await peer.svc.accounts.findUserByName("admin"))!;
  const apiToken = (await createToken(peer.svc, admin.uuid, { name: "log" })).token!;
  const before = requestLines().length;
  const form = new URLSearchParams({
    grant_type: "password",
    username: "admin",
    password: "Admin-password-1",
    client_id: "first-party",
  });
  const tokenRes = await fetch(`${peer.url}/api/auth/oauth2/token?client_secret=query-secret-1`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form,
  });
  expect(tokenRes.status).toBe(200);
  const bearer = ((await tokenRes.json()) as { access_token: string }).access_token;
  const me = await fetch(`${peer.url}/api/auth/users/${admin.uuid}?access_token=query-token-2`, {
    headers: { "X-Intdash-Token": apiToken },
  });
  expect(me.status).toBe(200);
  expect(
    (await fetch(`${peer.url}/api/auth/users/me`, { headers: { authorization: `Bearer ${bearer}` } })).status,
  ).toBe(200);
  expect((await fetch(`${peer.url}/api/no-such/secret-in-path-3`)).status).toBe(404);
  expect(
    (await fetch(`${peer.url}/api/auth/users`, { headers: { "X-Intdash-Token": "not-a-real-token-4" } })).status,
  ).toBe(401);
  expect((await fetch(`${peer.url}/api/health/alive`)).status).toBe(200);

  const got = requestLines().slice(before);
  expect(got).toHaveLength(6);
  for (const l of got) {
    expect(l.level).toBe(30);
    expect(typeof l.ms).toBe("number");
    expect(Object.keys(l).sort()).toEqual(expect.arrayContaining(["method", "route", "status", "ms"]));
    expect(l).not.toHaveProperty("path");
    expect(l).not.toHaveProperty("url");
  }
  expect(got.map((l) => [l.method, l.route, l.status])).toEqual([
    ["POST", "/auth/oauth2/token", 200],
    ["GET", "/auth/users/{user_uuid}", 200],
    ["GET", "/auth/users/me", 200],
    ["GET", "unmatched", 404],
    ["GET", "/auth/users", 401],
    ["GET", "/health/alive", 200],
  ]);
  expect(got[1]!.principal).toEqual({ kind: "user", id: admin.uuid });
  expect(got[2]!.principal).toEqual({ kind: "user", id: admin.uuid });
  expect(got[0]).not.toHaveProperty("principal");
  expect(got[5]).not.toHaveProperty("principal");

  const all = lines.join("\n");
  for (const secret of [
    apiToken,
    bearer,
    "Admin-password-1",
    "query-secret-1",
    "query-token-2",
    "secret-in-path-3",
    "not-a-real-token-4",
  ])
    expect(all).not.toContain(secret);
});
