// Settings of the cloud-peer process: flags win over environment variables, which win over defaults.
import fs from "node:fs";
import path from "node:path";
import { parseTrustedProxies } from "./http/client-address.js";
import { DEFAULT_LIMITS, type IscpLimits } from "./iscp/broker/options.js";
import { DURABILITIES, type Durability } from "./storage/db.js";

export interface CloudConfig {
  listenHost: string;
  listenPort: number;
  dataDir: string;
  publicUrl: string;
  adminPassword?: string;
  smtpUrl?: string;
  mailFrom: string;
  logLevel: string;
  bodyLimit: number;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  lockoutThreshold: number;
  passwordLifetimeDays: number;
  iscpQuicListen?: string;
  /** A listener of its own serving GET /metrics to anyone who reaches it (off when unset). */
  metricsListen?: { host: string; port: number };
  /** PEM files of the QUIC listener's certificate and key (both or neither; else a self-signed one under dataDir). */
  iscpQuicCert?: string;
  iscpQuicKey?: string;
  /** Broker limits overriding DEFAULT_LIMITS (cloud/iscp/broker/options.ts), from CLOUD_ISCP_LIMITS. */
  iscpLimits: Partial<IscpLimits>;
  /** How long shutdown waits for in-flight requests before cutting their connections (ms). */
  shutdownGraceMs: number;
  /** Reverse proxies whose X-Forwarded-For names the client (addresses and CIDR ranges; none by default). */
  trustedProxies: string[];
  /** File that gets a line per committed batch of real-time chunks (ingest/commit-trace.ts); off when unset. */
  commitTrace?: string;
  /** What an acknowledged write survives (storage/db.ts): power-loss (default) or process-crash. */
  durability: Durability;
}

export type ConfigInput = Partial<Record<Exclude<keyof CloudConfig, "iscpLimits" | "trustedProxies" | "durability" | "metricsListen">, string | number | undefined>> & {
  metricsListen?: string;
  listen?: string;
  iscpLimits?: string;
  trustedProxies?: string;
  durability?: string;
};

/** Every environment variable the cloud peer reads (listed by `cloud-peer --help`). */
export const ENV_VARS: ReadonlyArray<readonly [name: string, what: string]> = [
  ["CLOUD_LISTEN", "host:port to listen on (default 127.0.0.1:8080; port 0 picks a free one)"],
  ["CLOUD_DATA", "data directory (default ./data/cloud)"],
  ["CLOUD_PUBLIC_URL", "base URL in mails and tokens (default http://<listen>)"],
  ["CLOUD_ADMIN_PASSWORD", "password of the super user `admin` created at the first start (else a temporary one is printed and kept in <data>/initial-admin-password until it is changed)"],
  ["CLOUD_SMTP_URL", "send mail over SMTP, e.g. smtp://user:pass@host:587 (else .eml files under <data>/outbox/)"],
  ["CLOUD_MAIL_FROM", "sender address of mails (default cloud-peer@localhost)"],
  ["CLOUD_LOG_LEVEL", "pino log level (default info)"],
  ["CLOUD_BODY_LIMIT", "maximum request body in bytes (default 1048576)"],
  ["CLOUD_ACCESS_TOKEN_TTL", "access-token lifetime in seconds (default 3600)"],
  ["CLOUD_REFRESH_TOKEN_TTL", "refresh-token lifetime in seconds (default 2592000)"],
  ["CLOUD_LOCKOUT_THRESHOLD", "failed sign-ins that lock a password (default 5)"],
  ["CLOUD_PASSWORD_LIFETIME_DAYS", "days until a password expires (default 365; 0 = never)"],
  ["CLOUD_METRICS_LISTEN", "host:port serving GET /metrics to anyone who reaches it (default: off; /metrics on the main port then serves super users and this host only)"],
  ["CLOUD_ISCP_QUIC_LISTEN", "UDP host:port for iSCP over QUIC (default: off)"],
  ["CLOUD_ISCP_QUIC_CERT", "PEM file of the QUIC certificate (chain) (with CLOUD_ISCP_QUIC_KEY; default: self-signed under <data>/quic)"],
  ["CLOUD_ISCP_QUIC_KEY", "PEM file of the QUIC certificate's private key"],
  ["CLOUD_TRUSTED_PROXIES", "reverse proxies (IPs, CIDR ranges, comma-separated) whose X-Forwarded-For gives the client address for sign-in limits (default: none, the header is ignored)"],
  ["CLOUD_COMMIT_TRACE", "append \"<CLOCK_MONOTONIC ns> <points>\" per committed batch of iSCP chunks to this file, to time runs from outside (default: off)"],
  ["CLOUD_DURABILITY", "what an acknowledged chunk survives: power-loss (default: fsync before the ack) or process-crash (no fsync per commit; faster, a power cut may lose the last acked chunks; docs/security.md)"],
  ["CLOUD_ISCP_LIMITS", `iSCP broker limits as name=value,... over the defaults (${Object.keys(DEFAULT_LIMITS).join(", ")}; docs/iscp.md)`],
];

/** `name=value,...` of broker limits; an unknown name or a bad number stops the start. */
function iscpLimits(v: string | undefined): Partial<IscpLimits> {
  const out: Partial<IscpLimits> = {};
  for (const part of (v ?? "").split(",").map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf("=");
    const name = (eq > 0 ? part.slice(0, eq) : part).trim() as keyof IscpLimits;
    if (!(name in DEFAULT_LIMITS)) throw new Error(`invalid CLOUD_ISCP_LIMITS: unknown limit "${name}" (known: ${Object.keys(DEFAULT_LIMITS).join(", ")})`);
    const value = eq > 0 ? part.slice(eq + 1).trim() : "";
    if (value === "") throw new Error(`invalid CLOUD_ISCP_LIMITS: "${part}" needs name=value`);
    out[name] = int(`CLOUD_ISCP_LIMITS ${name}`, value, 0, name === "expiryGraceFloorSec" ? 0 : 1);
  }
  return out;
}

/** CLOUD_DURABILITY: a typo must not silently weaken (or strengthen) what an ack promises. */
export function parseDurability(v: unknown): Durability {
  if (v === undefined || v === "") return "power-loss";
  const d = String(v).trim();
  if (!(DURABILITIES as readonly string[]).includes(d)) throw new Error(`invalid CLOUD_DURABILITY "${String(v)}": expected ${DURABILITIES.join(" or ")}`);
  return d as Durability;
}

/** An integer setting; a typo must not silently become NaN (e.g. a lock-out that never locks). */
function int(name: string, v: unknown, d: number, min: number): number {
  if (v === undefined || v === "") return d;
  const n = typeof v === "number" ? v : Number(String(v).trim());
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`invalid ${name} "${String(v)}": expected an integer >= ${min}`);
  return n;
}

/**
 * A PEM file an operator names, checked at start rather than at the first QUIC handshake. The value is never
 * echoed when it looks like PEM text itself (a key must not end up in an error message).
 */
function pemFile(name: string, v: unknown): string | undefined {
  if (v === undefined || v === "") return undefined;
  const given = String(v);
  if (given.includes("-----BEGIN")) throw new Error(`invalid ${name}: expected the path of a PEM file, not PEM text`);
  const file = path.resolve(given);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new Error(`invalid ${name} "${given}": cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (!text.includes("-----BEGIN")) throw new Error(`invalid ${name} "${given}": the file is not PEM`);
  return file;
}

/** The QUIC certificate and key files: both or neither. */
function quicTls(flags: ConfigInput, env: NodeJS.ProcessEnv): { iscpQuicCert?: string; iscpQuicKey?: string } {
  const cert = pemFile("--iscp-quic-cert / CLOUD_ISCP_QUIC_CERT", flags.iscpQuicCert ?? env.CLOUD_ISCP_QUIC_CERT);
  const key = pemFile("--iscp-quic-key / CLOUD_ISCP_QUIC_KEY", flags.iscpQuicKey ?? env.CLOUD_ISCP_QUIC_KEY);
  if ((cert === undefined) !== (key === undefined))
    throw new Error("--iscp-quic-cert / CLOUD_ISCP_QUIC_CERT and --iscp-quic-key / CLOUD_ISCP_QUIC_KEY go together: set both or neither");
  return cert && key ? { iscpQuicCert: cert, iscpQuicKey: key } : {};
}

/** `host:port` (the host defaults to 127.0.0.1; port 0 picks a free one). */
function hostPort(name: string, listen: string): { host: string; port: number } {
  const idx = listen.lastIndexOf(":");
  const host = idx > 0 ? listen.slice(0, idx).replace(/^\[|\]$/g, "") : "127.0.0.1";
  const port = Number(idx >= 0 ? listen.slice(idx + 1) : listen);
  if (!/^\d+$/.test(listen.slice(idx + 1)) || port > 65535) throw new Error(`invalid ${name} "${listen}": expected host:port`);
  return { host, port };
}

export function loadConfig(flags: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): CloudConfig {
  const listen = String(flags.listen ?? env.CLOUD_LISTEN ?? "127.0.0.1:8080");
  const { host: listenHost, port: listenPort } = hostPort("--listen / CLOUD_LISTEN", listen);
  const metricsListen = flags.metricsListen ?? env.CLOUD_METRICS_LISTEN;
  const dataDir = path.resolve(String(flags.dataDir ?? env.CLOUD_DATA ?? "./data/cloud"));
  const publicUrl = String(flags.publicUrl ?? env.CLOUD_PUBLIC_URL ?? `http://${listenHost}:${listenPort}`).replace(/\/$/, "");
  return {
    listenHost,
    listenPort,
    dataDir,
    publicUrl,
    adminPassword: (flags.adminPassword ?? env.CLOUD_ADMIN_PASSWORD) as string | undefined,
    smtpUrl: (flags.smtpUrl ?? env.CLOUD_SMTP_URL) as string | undefined,
    mailFrom: String(flags.mailFrom ?? env.CLOUD_MAIL_FROM ?? "cloud-peer@localhost"),
    logLevel: String(flags.logLevel ?? env.CLOUD_LOG_LEVEL ?? "info"),
    bodyLimit: int("CLOUD_BODY_LIMIT", flags.bodyLimit ?? env.CLOUD_BODY_LIMIT, 1024 * 1024, 1),
    accessTokenTtl: int("CLOUD_ACCESS_TOKEN_TTL", flags.accessTokenTtl ?? env.CLOUD_ACCESS_TOKEN_TTL, 3600, 1),
    refreshTokenTtl: int("CLOUD_REFRESH_TOKEN_TTL", flags.refreshTokenTtl ?? env.CLOUD_REFRESH_TOKEN_TTL, 30 * 24 * 3600, 1),
    lockoutThreshold: int("CLOUD_LOCKOUT_THRESHOLD", flags.lockoutThreshold ?? env.CLOUD_LOCKOUT_THRESHOLD, 5, 1),
    passwordLifetimeDays: int("CLOUD_PASSWORD_LIFETIME_DAYS", flags.passwordLifetimeDays ?? env.CLOUD_PASSWORD_LIFETIME_DAYS, 365, 0),
    iscpQuicListen: (flags.iscpQuicListen ?? env.CLOUD_ISCP_QUIC_LISTEN) as string | undefined,
    ...(metricsListen ? { metricsListen: hostPort("--metrics-listen / CLOUD_METRICS_LISTEN", metricsListen) } : {}),
    ...quicTls(flags, env),
    iscpLimits: iscpLimits(flags.iscpLimits ?? env.CLOUD_ISCP_LIMITS),
    shutdownGraceMs: int("shutdownGraceMs", flags.shutdownGraceMs, 10_000, 0),
    trustedProxies: parseTrustedProxies(flags.trustedProxies ?? env.CLOUD_TRUSTED_PROXIES),
    commitTrace: (flags.commitTrace ?? env.CLOUD_COMMIT_TRACE) as string | undefined,
    durability: parseDurability(flags.durability ?? env.CLOUD_DURABILITY),
  };
}
