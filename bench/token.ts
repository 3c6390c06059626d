// Token endpoint throughput: our client_credentials grant (ES256 JWT, secret checked against its
// stored digest) against node-oidc-provider with one client_credentials client issuing ES256 JWT
// access tokens, on the same machine, in the same run. Each server runs in its own child process;
// autocannon drives each from this one (32 connections, 10 s in total per server, in alternating slices).
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { isMain, procCpuSeconds, report, type Row } from "./lib.js";

const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_TOKEN_SECONDS ?? 10);
const CLIENT_ID = "bench-client";
const SECRET = crypto.randomBytes(32).toString("base64url");

interface Target {
  name: string;
  url: string;
  body: string;
}

async function serveOurs(): Promise<Target> {
  const { loadConfig } = await import("../cloud/config.js");
  const { startCloudPeer } = await import("../cloud/server.js");
  const { clientsRepo } = await import("../cloud/oauth/repo/clients.js");
  const { hashSecret } = await import("../cloud/oauth/service/secrets.js");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-token-"));
  process.on("exit", () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig(
    { listen: "127.0.0.1:0", dataDir, logLevel: "silent", adminPassword: "Admin-password-1" },
    {},
  );
  const peer = await startCloudPeer(config);
  const admin = await peer.svc.accounts.findUserByName("admin");
  const now = new Date().toISOString();
  await clientsRepo.insert(peer.svc.db, {
    client_id: CLIENT_ID,
    name: "bench",
    grant_types: ["client_credentials"],
    token_endpoint_auth_method: "client_secret_post",
    redirect_uris: [],
    response_types: [],
    scopes: ["me:a"],
    audiences: [],
    tls_client_auth_subject_dn: "",
    user_uuid: admin!.uuid,
    created_at: now,
    updated_at: now,
  });
  await clientsRepo.addSecret(peer.svc.db, CLIENT_ID, "bench", hashSecret(SECRET), now);
  return {
    name: "cloud-peer",
    url: `${peer.url}/api/auth/oauth2/token`,
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: CLIENT_ID,
      client_secret: SECRET,
    }).toString(),
  };
}

async function serveOidcProvider(): Promise<Target> {
  const { default: Provider } = await import("oidc-provider");
  const http = await import("node:http");
  const ec = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" });
  const rsa = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const provider = new Provider(issuer, {
    jwks: {
      keys: [
        { ...rsa, kid: "rsa", alg: "RS256", use: "sig" },
        { ...ec, kid: "ec", alg: "ES256", use: "sig" },
      ],
    },
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: SECRET,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: "client_secret_post",
        scope: "api",
      },
    ],
    scopes: ["api"],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => "urn:bench:api",
        getResourceServerInfo: () => ({
          scope: "api",
          audience: "urn:bench:api",
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "ES256" } },
        }),
      },
    },
  } as never);
  server.on("request", provider.callback());
  return {
    name: "node-oidc-provider",
    url: `${issuer}/token`,
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: CLIENT_ID,
      client_secret: SECRET,
      scope: "api",
    }).toString(),
  };
}

/** Starts one server in a child process; resolves with its target once it listens. */
function startChild(which: "ours" | "oidc"): Promise<{ child: ChildProcess; target: Target }> {
  const file = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ["--import", "tsx", file, "--serve", which], {
    cwd: path.resolve(path.dirname(file), ".."),
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      if (line.startsWith("TARGET ")) resolve({ child, target: JSON.parse(line.slice(7)) });
    });
    child.once("exit", (code) => reject(new Error(`${which} server exited with ${code}`)));
  });
}

const SLICES = 4;

interface Tally {
  requests: number;
  seconds: number;
  p99: number[];
  mean: number[];
  non2xx: number;
  errors: number;
  /** The server process's user + system CPU seconds over the measured slices. */
  cpuS: number;
}

async function slice(target: Target, seconds: number) {
  return autocannon({
    url: target.url,
    method: "POST",
    connections: CONNECTIONS,
    duration: seconds,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: target.body,
  });
}

/** Proves the endpoint issues a token before measuring it; returns the token's JWS algorithm. */
async function probe(target: Target): Promise<string> {
  const res = await fetch(target.url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: target.body,
  });
  const json = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !json.access_token)
    throw new Error(`${target.name} did not issue a token: ${res.status} ${JSON.stringify(json)}`);
  return JSON.parse(Buffer.from(json.access_token.split(".")[0]!, "base64url").toString()).alg;
}

/**
 * Both servers run at once (the idle one costs nothing) and are driven in alternating slices, so a
 * change of load on this shared machine during the run hits both alike.
 */
export async function run(): Promise<Row[]> {
  const started = await Promise.all((["ours", "oidc"] as const).map((w) => startChild(w)));
  try {
    const targets = started.map((s) => s.target);
    const algs = await Promise.all(targets.map(probe));
    for (const t of targets) await slice(t, 1); // warm-up: JIT and caches
    const tally: Tally[] = targets.map(() => ({
      requests: 0,
      seconds: 0,
      p99: [],
      mean: [],
      non2xx: 0,
      errors: 0,
      cpuS: 0,
    }));
    for (let i = 0; i < SLICES; i++) {
      for (const [k, t] of targets.entries()) {
        const pid = started[k]!.child.pid!;
        const cpu0 = procCpuSeconds(pid);
        const r = await slice(t, DURATION_S / SLICES);
        const s = tally[k]!;
        s.cpuS += procCpuSeconds(pid) - cpu0;
        s.requests += r.requests.total;
        s.seconds += r.duration;
        s.p99.push(r.latency.p99);
        s.mean.push(r.latency.average);
        s.non2xx += r.non2xx;
        s.errors += r.errors;
      }
    }
    const rows: Row[] = targets.map((t, k) => {
      const s = tally[k]!;
      return {
        server: t.name,
        alg: algs[k],
        "tokens/s": Math.round(s.requests / s.seconds),
        "p99 ms (worst slice)": Math.max(...s.p99),
        "mean ms": +(s.mean.reduce((a, b) => a + b, 0) / s.mean.length).toFixed(2),
        // CPU per token does not depend on how busy the shared machine is, unlike the rate.
        "server CPU µs/token": Math.round((s.cpuS * 1e6) / Math.max(1, s.requests)),
        non2xx: s.non2xx,
        errors: s.errors,
      };
    });
    const ratio = (col: string, inverse = false) => {
      const [a, b] = [rows[0]![col] as number, rows[1]![col] as number];
      return +(inverse ? b / a : a / b).toFixed(2);
    };
    rows.push({
      server: "ratio cloud-peer / node-oidc-provider",
      "tokens/s": ratio("tokens/s"),
      "server CPU µs/token": ratio("server CPU µs/token", true),
    });
    return rows;
  } finally {
    for (const s of started) s.child.kill("SIGTERM");
  }
}

if (process.argv[2] === "--serve") {
  const target = process.argv[3] === "oidc" ? await serveOidcProvider() : await serveOurs();
  process.stdout.write(`TARGET ${JSON.stringify(target)}\n`);
  process.once("SIGTERM", () => process.exit(0));
} else if (isMain(import.meta.url)) {
  const rows = await run();
  report("token", rows);
}
