// The agent's token request against a real HTTP server: which answers refuse the credentials (the session ends)
// and which only say the cloud is not answering now (the token held stays in use; machines/connection.ts).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { TokenRejectedError } from "../../../machines/connection.js";
import { fetchToken } from "../../../runtime/deferred/cloud-auth.js";

const SECRET = "s3cret-never-shown";
let status = 200;
let server: http.Server;
let url: string;
beforeAll(async () => {
  server = http.createServer((_req, res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(
      status === 200
        ? JSON.stringify({ access_token: "tok", expires_in: 60 })
        : JSON.stringify({ error: status === 401 ? "invalid_client" : "busy" }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const settings = (server_url: string) => ({
  server_url,
  project_uuid: "00000000-0000-4000-8000-000000000001",
  edge_uuid: "00000000-0000-4000-8000-000000000002",
  client_secret: SECRET,
});
const failure = (server_url = url) =>
  fetchToken(settings(server_url)).then(
    () => expect.unreachable("the request should fail"),
    (e: unknown) => e as Error,
  );

it("holds the token the cloud grants, with its lifetime", async () => {
  status = 200;
  expect(await fetchToken(settings(url))).toEqual({ accessToken: "tok", expiresIn: 60 });
});

it("takes a 4xx as the credentials refused, and a 5xx, 408 or 429 as the cloud not answering now", async () => {
  for (const refused of [400, 401, 403]) {
    status = refused;
    const e = await failure();
    expect([e instanceof TokenRejectedError, e.message]).toEqual([true, expect.stringContaining(`(${refused})`)]);
    expect(e.message).not.toContain(SECRET);
  }
  for (const busy of [408, 429, 500, 502, 503]) {
    status = busy;
    const e = await failure();
    expect([e instanceof TokenRejectedError, e.message]).toEqual([false, expect.stringContaining(`(${busy})`)]);
  }
});

it("takes a cloud it cannot reach as not answering, not as a refusal", async () => {
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const e = await failure(`http://127.0.0.1:${port}`);
  expect([e instanceof TokenRejectedError, e.message]).toEqual([false, expect.stringMatching(/^cannot reach /)]);
});
