// Every operation of the agent's command API (its OpenAPI document), and the paths it serves beside the
// document, fed schema-shaped bad requests (seeded, bounded) on a real edge-agent process: no answer is a 5xx,
// every error has the API's shape, the process lives on, and its open descriptors come back to where they were.
// FUZZ_SEED picks another run; a failure names its seed.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { requestFor, seeded, type FuzzRequest } from "../../support/openapi-fuzz.js";
import { eventually, tempDir } from "../../support/agent.js";
import { ApiClient } from "../../../runtime/cli/client.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
/** Requests per operation. */
const PER_OPERATION = 12;
const BIN = path.resolve("bin/edge-agent.mjs");
const BASE = "/api/v1";

let dir = "";
let socket = "";
let child: ChildProcess | undefined;
let exited: Promise<unknown> = Promise.resolve();
let stderr = "";

beforeAll(async () => {
  dir = await tempDir("agent-fuzz-");
  socket = path.join(dir, "agent.sock");
  // The agent's cwd is its temp dir: a relative path in a bent body names nothing outside it.
  child = spawn(process.execPath, [BIN, "--socket", socket, "--data", path.join(dir, "data")], {
    cwd: dir,
    env: { ...process.env, AGENT_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.resume();
  child.stderr!.on("data", (d) => (stderr += d));
  exited = new Promise((r) => child!.once("exit", r));
  const api = new ApiClient(socket);
  await eventually(async () => (await api.get("/connection")).status === 200, 30_000);
}, 60_000);
afterAll(async () => {
  child?.kill("SIGTERM");
  await exited;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * One request on a connection of its own, as a careless client sends it (any media type, any body). The
 * connection is kept alive until the answer is read and then closed here: an answer given before the whole body
 * was read (413) is not lost to a write on a connection the agent already closed.
 */
function send(req: FuzzRequest): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        socketPath: socket,
        method: req.method,
        path: BASE + req.path,
        agent: false,
        headers: { host: "unix", ...req.headers, connection: "keep-alive" },
        timeout: 20_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => {
          r.destroy();
          resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), text });
        });
        res.on("error", reject);
      },
    );
    r.on("timeout", () => r.destroy(new Error("no answer within 20 s")));
    r.on("error", reject);
    r.end(req.body);
  });
}

const fds = () => fs.readdirSync(`/proc/${child!.pid}/fd`).length;

it("answers every bent request of every operation with a 2xx-4xx in the API's shape, and leaves no descriptor behind", async () => {
  const doc = JSON.parse((await send({ method: "GET", path: "/openapi.json", headers: {} })).text) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const baseline = fds();
  const rng = seeded(SEED);
  const failures: string[] = [];
  let sent = 0;
  const operations = Object.keys(doc.paths)
    .sort()
    .flatMap((p) =>
      Object.keys(doc.paths[p]!)
        .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
        .sort()
        .map((m) => [p, m] as const),
    );
  expect(operations.length).toBeGreaterThan(30);
  for (const [p, method] of operations) {
    for (let i = 0; i < PER_OPERATION; i++) {
      const req = requestFor(doc, p, method, rng);
      const where = `${req.method} ${req.path.slice(0, 200)} (${req.body?.slice(0, 200) ?? ""})`;
      const r = await send(req).catch((e: unknown) => e as Error);
      sent++;
      if (r instanceof Error) failures.push(`${where}: ${r.message}`);
      else if (r.status >= 500) failures.push(`${where} -> ${r.status} ${r.text.slice(0, 200)}`);
      else if (r.status >= 400) {
        // {title, status, detail, instance}, nothing else, and the status it says it is.
        const body = JSON.parse(r.text) as Record<string, unknown>;
        const shaped = Object.keys(body).sort().join() === "detail,instance,status,title" && body.status === r.status;
        if (!shaped || !r.type.startsWith("application/json"))
          failures.push(`${where} -> ${r.status} not in the API's shape: ${r.text.slice(0, 200)}`);
      }
      expect(child!.exitCode, `the agent exited (seed ${SEED}): ${stderr}`).toBe(null);
    }
  }
  // Beside the document: the document itself and a path that is no route, under every method.
  for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"])
    for (const p of ["/openapi.json", "/metrics", "/nothing/here", "/upstreams/%00/state", "/../../etc/passwd"]) {
      const r = await send({ method, path: p, headers: { "content-type": "application/json" }, body: "{" });
      sent++;
      if (r.status >= 500) failures.push(`${method} ${p} -> ${r.status} ${r.text.slice(0, 200)}`);
    }
  expect(sent).toBeGreaterThan(300);
  expect(failures, `seed ${SEED}`).toEqual([]);
  expect(child!.exitCode, stderr).toBe(null);
  // Descriptors: back to the baseline, give or take one of a background task (a connector's FIFO opened meanwhile
  // is closed when it is deleted or fails).
  await expect.poll(fds, { timeout: 20_000, interval: 500 }).toBeLessThanOrEqual(baseline + 1);
}, 600_000);
