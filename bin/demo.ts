// `npm start`: the cloud peer, an edge agent configured for it, and a sample device connector, on
// embedded defaults under ./data/. Prints where to look; Ctrl-C stops everything cleanly.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { createToken } from "../cloud/accounts/service/tokens.js";
import { loadConfig } from "../cloud/config.js";
import { startCloudPeer } from "../cloud/server.js";
import { nodeEntryArgs, PACKAGE_ROOT } from "../lib/package-paths.js";
import { apiClient, ensureDemoCloud } from "./demo-setup.js";
import { ensureDemoDashboard } from "./demo-dashboard.js";

const root = path.resolve(process.env.DEMO_DATA ?? "./data");
const cloudData = path.join(root, "cloud");
const agentData = path.join(root, "agent");
const socket = path.join(agentData, "agent.sock");
const listen = process.env.CLOUD_LISTEN ?? "127.0.0.1:8080";

function agentCall(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        socketPath: socket,
        method,
        path: `/api/v1${p}`,
        headers: data
          ? { "content-type": "application/json; charset=UTF-8", "content-length": Buffer.byteLength(data) }
          : {},
      },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

async function waitForSocket(child: ChildProcess, timeoutMs = 20_000) {
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`edge-agent exited with ${child.exitCode}`);
    if (fs.existsSync(socket)) {
      const ok = await agentCall("GET", "/version").then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return;
    }
    if (Date.now() - t0 > timeoutMs) throw new Error("edge-agent did not start");
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Creates or replaces one item of the agent's configuration. */
async function put(collection: string, item: { id: string }) {
  const existing = await agentCall("GET", `${collection}/${encodeURIComponent(item.id)}`);
  const { id, ...rest } = item;
  const r =
    existing.status === 200
      ? await agentCall("PATCH", `${collection}/${encodeURIComponent(id)}`, rest)
      : await agentCall("POST", collection, item);
  if (r.status >= 400) throw new Error(`${collection} ${item.id}: ${JSON.stringify(r.body)}`);
}

async function main() {
  fs.mkdirSync(agentData, { recursive: true });
  // The admin's password: CLOUD_ADMIN_PASSWORD, or one generated at the very first start and kept
  // (mode 0600) beside the data, so the demo's admin is never left with a temporary password.
  const pwFile = path.join(root, "admin-password");
  if (!process.env.CLOUD_ADMIN_PASSWORD && !fs.existsSync(path.join(cloudData, "cloud.db")) && !fs.existsSync(pwFile))
    fs.writeFileSync(pwFile, `Demo-${randomBytes(12).toString("base64url")}\n`, { mode: 0o600 });
  const adminPassword =
    process.env.CLOUD_ADMIN_PASSWORD ?? (fs.existsSync(pwFile) ? fs.readFileSync(pwFile, "utf8").trim() : undefined);
  const cloud = await startCloudPeer(
    loadConfig({ listen, dataDir: cloudData, adminPassword, logLevel: process.env.CLOUD_LOG_LEVEL ?? "warn" }),
  ).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "EADDRINUSE")
      throw new Error(
        `${listen} is in use by another program: stop it, or give the demo another address, e.g. CLOUD_LISTEN=127.0.0.1:8081 npm start`,
      );
    throw err;
  });
  const admin = await cloud.svc.accounts.findUserByName("admin");
  const token = (await createToken(cloud.svc, admin!.uuid, { name: `demo ${new Date().toISOString()}` })).token!;
  const demo = await ensureDemoCloud(root, apiClient(cloud.url, token));
  await ensureDemoDashboard(apiClient(cloud.url, token), demo);
  // The token goes to a 0600 file, not to the console: secrets never appear in output or logs.
  const tokenFile = path.join(root, "admin-token");
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const show = (p: string) => (p.startsWith(process.cwd() + path.sep) ? path.relative(process.cwd(), p) : p);
  const auth = `-H "X-Intdash-Token: $(cat ${show(tokenFile)})"`;

  // The sample connector is launched with this node: its folder is allowed as the administrator would allow it.
  const agentArgs = [
    path.join(PACKAGE_ROOT, "bin/edge-agent.mjs"),
    "--socket",
    socket,
    "--data",
    agentData,
    "--allow-dir",
    path.dirname(process.execPath),
  ];
  // Warnings and errors only (as the cloud's), so the banner below is what a visitor reads first.
  const agentEnv = { ...process.env, AGENT_LOG_LEVEL: process.env.AGENT_LOG_LEVEL ?? "warn" };
  const agent = spawn(process.execPath, agentArgs, { stdio: ["ignore", "inherit", "inherit"], env: agentEnv });
  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    console.log("\nstopping: edge agent, then cloud peer");
    if (agent.exitCode === null) {
      agent.kill("SIGTERM");
      await new Promise((r) => agent.once("exit", r));
    }
    await cloud.close();
    process.exit(code);
  };
  process.once("SIGINT", () => void stop());
  process.once("SIGTERM", () => void stop());
  agent.once("exit", (code) => {
    if (!stopping) {
      console.error(`edge-agent exited (${code})`);
      void stop(1);
    }
  });
  await waitForSocket(agent);
  const measurementsOf = async () =>
    ((await agentCall("GET", "/measurements")).body?.items ?? []) as { uuid: string }[];
  const earlier = new Set((await measurementsOf()).map((m) => m.uuid));

  const conn = await agentCall("PATCH", "/connection", {
    server_url: cloud.url,
    project_uuid: demo.projectUuid,
    edge_uuid: demo.edgeUuid,
    client_secret: demo.edgeSecret,
  });
  if (conn.status !== 200) throw new Error(`connection settings: ${JSON.stringify(conn.body)}`);
  await put("/upstreams", { id: "demo", persist: true, qos: "partial" } as { id: string });
  // The sample connector plays a vehicle on a test track: position, speed, IMU, temperature, a CAN frame, a log.
  await put("/device-connectors/upstream", {
    id: "vehicle",
    format: "iscp-v2-compat",
    dest_ids: ["demo"],
    ipc: { type: "fifo", path: path.join(agentData, "vehicle.fifo") },
    launch: {
      command: process.execPath,
      args: [...nodeEntryArgs("runtime/connectors/sample-connector.ts"), "--path", "${ipc.path}", "--play", "vehicle"],
    },
  } as { id: string });
  // A demo data directory from before keeps a channel of its own; only the vehicle plays now.
  if ((await agentCall("GET", "/device-connectors/upstream/sample")).status === 200)
    await agentCall("DELETE", "/device-connectors/upstream/sample");
  const verified = await agentCall("POST", "/connection/verify");
  // The measurement the sample connector's data started, to print its data-point URL.
  let measurement = "<measurement uuid>";
  for (let i = 0; i < 50 && measurement.startsWith("<"); i++) {
    const started = (await measurementsOf()).find((m) => !earlier.has(m.uuid));
    if (started) measurement = started.uuid;
    else await new Promise((r) => setTimeout(r, 200));
  }
  // Named as a team would name a run, so the console lists it by name. The agent's first chunk makes it in the
  // cloud: wait for that before naming it.
  const name = `Test track run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`;
  const api = apiClient(cloud.url, token);
  for (let i = 0; i < 50 && !measurement.startsWith("<"); i++) {
    const named = await api(`/v1/projects/${demo.projectUuid}/measurements/${measurement}`, {
      method: "PUT",
      json: { name },
    }).then(
      () => true,
      () => false,
    );
    if (named) break;
    await new Promise((r) => setTimeout(r, 200));
  }

  console.log(`
Demo running (data in ${root}):
  console           ${cloud.url}/console/   (sign in as "admin", password in ${fs.existsSync(pwFile) ? show(pwFile) : "CLOUD_ADMIN_PASSWORD"})
  the vehicle's run ${cloud.url}/console/#/measurement/${demo.projectUuid}/${measurement}   ("${name}")
  cloud peer        ${cloud.url}/api   (OpenAPI: ${cloud.url}/api/openapi.json)
  admin             user "admin", password in ${fs.existsSync(pwFile) ? show(pwFile) : "CLOUD_ADMIN_PASSWORD"}, API token in ${show(tokenFile)}
  project           ${demo.projectUuid}
  edge              ${demo.edgeUuid} (verified by the agent: ${verified.body?.verified})
  agent state       npx agentctl --socket ${show(socket)} state
  measurements      curl ${auth} '${cloud.url}/api/v1/projects/${demo.projectUuid}/measurements'
  data points       curl ${auth} '${cloud.url}/api/v1/projects/${demo.projectUuid}/data?name=${measurement}'
Ctrl-C stops everything.`);
}

main().catch((err) => {
  console.error(`demo failed: ${(err as Error).message}`);
  process.exit(1);
});
