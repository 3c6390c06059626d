// What a TLS listen address answers besides HTTPS itself, on a real cloud-peer process with a test CA's
// certificate: HSTS on every HTTPS answer, and a clear 400 (not an empty reply) to plain HTTP sent to the port.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeTestCa, type TestCa } from "../../support/test-ca.js";
import { spawnPeerAt } from "../iscp/peer-process.js";

let dir: string;
let ca: TestCa;
let peer: Awaited<ReturnType<typeof spawnPeerAt>>;
const port = () => Number(new URL(peer.url).port);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-tls-front-"));
  ca = makeTestCa(dir);
  const pair = ca.issue("server", "2001");
  peer = await spawnPeerAt(path.join(dir, "data"), { CLOUD_TLS_CERT: pair.cert, CLOUD_TLS_KEY: pair.key });
}, 120_000);

afterAll(async () => {
  peer?.child.kill("SIGTERM");
  await peer?.exit;
  fs.rmSync(dir, { recursive: true, force: true });
});

function get(
  mod: typeof http | typeof https,
  url: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    mod
      .get(url, { agent: false, ...(mod === https ? { ca: ca.ca } : {}) }, (res) => {
        let body = "";
        res.on("data", (c) => (body += String(c)));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      })
      .on("error", reject);
  });
}

it("sends Strict-Transport-Security on HTTPS answers", async () => {
  const r = await get(https, `${peer.url}/api/health/alive`);
  expect(r.status).toBe(200);
  expect(r.headers["strict-transport-security"]).toBe("max-age=31536000");
  const missing = await get(https, `${peer.url}/api/no-such-route`);
  expect(missing.status).toBe(404);
  expect(missing.headers["strict-transport-security"]).toBe("max-age=31536000");
}, 120_000);

it("answers plain HTTP on the TLS port with a 400 naming the https:// URL, and keeps serving HTTPS", async () => {
  const r = await get(http, `http://127.0.0.1:${port()}/api/health/alive`);
  expect(r.status).toBe(400);
  expect(JSON.parse(r.body)).toEqual({
    type: "invalid_request",
    title: `this port speaks HTTPS: a plain HTTP request reached it; use https://127.0.0.1:${port()}/`,
  });
  // Bytes that are neither TLS nor HTTP: the connection is closed, the server goes on.
  await new Promise<void>((resolve, reject) => {
    const s = net.connect(port(), "127.0.0.1", () => s.write(Buffer.alloc(32, 0xff)));
    s.on("close", () => resolve());
    s.on("error", reject);
    s.resume();
  });
  const again = await get(https, `${peer.url}/api/health/alive`);
  expect(again.status).toBe(200);
}, 120_000);
