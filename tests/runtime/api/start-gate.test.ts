// The agent's socket listens before the data path, the machines and the command API are loaded: version
// is answered at once, every other request waits for the API and is then answered as usual (never
// refused), and an agent that cannot start answers 503 and removes its socket.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { StartGate } from "../../../runtime/api/start-gate.js";
import { closeUnix, listenUnix } from "../../../runtime/api/unix-socket.js";
import { ApiClient } from "../../../runtime/cli/client.js";
import { startAgent } from "../../../runtime/daemon.js";
import { stopChild } from "../../../runtime/device-bench/children.js";
import { tempDir } from "../../support/agent.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function gateOnSocket() {
  const dir = await tempDir("gate-");
  const socket = path.join(dir, "agent.sock");
  const gate = new StartGate();
  const server = await listenUnix(gate.handler, socket);
  cleanup.push(async () => {
    await closeUnix(server, socket);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { gate, api: new ApiClient(socket) };
}

it("answers version while loading and hands waiting requests, bodies intact, to the API once it is there", async () => {
  const { gate, api } = await gateOnSocket();
  expect(await api.get("/version")).toMatchObject({
    status: 200,
    body: { version: "1.2.1" },
    headers: { "content-type": "application/json; charset=UTF-8" },
  });
  let answered = false;
  const waiting = api.post("/upstreams", { id: "u" }).finally(() => (answered = true));
  await new Promise((r) => setTimeout(r, 200));
  expect(answered).toBe(false);
  gate.open((req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () =>
      res
        .writeHead(201, { "content-type": "application/json" })
        .end(JSON.stringify({ got: `${req.method} ${req.url} ${body}` })),
    );
  });
  expect(await waiting).toMatchObject({ status: 201, body: { got: 'POST /api/v1/upstreams {"id":"u"}' } });
  expect((await api.get("/version")).body).toEqual({ got: "GET /api/v1/version " }); // the API answers everything now
});

it("answers 503 in the API's error shape to waiting and later requests when the agent cannot start", async () => {
  const { gate, api } = await gateOnSocket();
  const waiting = api.get("/connection");
  await new Promise((r) => setTimeout(r, 100));
  gate.fail();
  const problem = { status: 503, title: "Service unavailable", detail: "the agent failed to start; see its log" };
  expect((await waiting).body).toEqual({ ...problem, instance: "/api/v1/connection" });
  expect((await api.get("/upstreams?x=1")).body).toEqual({ ...problem, instance: "/api/v1/upstreams" });
});

it("removes its socket when the rest of the agent fails to open", async () => {
  const dir = await tempDir("gate-");
  cleanup.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, "data");
  fs.mkdirSync(dataDir);
  fs.writeFileSync(path.join(dataDir, "settings"), "not an LMDB directory");
  const socketPath = path.join(dir, "agent.sock");
  await expect(startAgent({ socketPath, dataDir })).rejects.toThrow();
  expect(fs.existsSync(socketPath)).toBe(false);
});

/** edge-agent started as a child, resolved once its socket answers GET /version. */
async function agentAnswering() {
  const dir = await tempDir("gate-");
  const socket = path.join(dir, "agent.sock");
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, "bin/edge-agent.mjs"),
      "--socket",
      socket,
      "--data",
      path.join(dir, "data"),
      "--log-level",
      "info",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  cleanup.push(async () => {
    await stopChild(child);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const out = { log: "" };
  child.stdout.on("data", (c: Buffer) => (out.log += c.toString()));
  const api = new ApiClient(socket);
  while ((await api.get("/version").catch(() => undefined))?.status !== 200) await new Promise((r) => setTimeout(r, 5));
  return { child, socket, api, out };
}

it("edge-agent's socket answers before the agent has loaded, and a request made then waits and succeeds", async () => {
  const { api, out } = await agentAnswering();
  // The daemon logs "edge agent listening" once the whole agent is open: not yet, it is still loading.
  expect(out.log).not.toContain("edge agent listening");
  const created = await api.post("/upstreams", { id: "u" });
  expect(created.status).toBe(201);
  expect((await api.get("/upstreams/u")).body).toEqual(created.body);
  expect(out.log).toContain("edge agent listening");
}, 120_000);

it("edge-agent stopped with SIGTERM while still loading exits 0 and removes its socket", async () => {
  const { child, socket } = await agentAnswering();
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  child.kill("SIGTERM");
  expect(await exited).toBe(0);
  expect(fs.existsSync(socket)).toBe(false);
}, 120_000);
