// Settings of the cloud-peer process: flags win over environment variables, which win over defaults.
import path from "node:path";

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
}

export type ConfigInput = Partial<Record<keyof CloudConfig, string | number | undefined>> & { listen?: string };

const num = (v: unknown, d: number) => (v === undefined || v === "" ? d : Number(v));

export function loadConfig(flags: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): CloudConfig {
  const listen = String(flags.listen ?? env.CLOUD_LISTEN ?? "127.0.0.1:8080");
  const idx = listen.lastIndexOf(":");
  const listenHost = idx > 0 ? listen.slice(0, idx).replace(/^\[|\]$/g, "") : "127.0.0.1";
  const listenPort = Number(idx >= 0 ? listen.slice(idx + 1) : listen);
  if (!Number.isInteger(listenPort) || listenPort < 0 || listenPort > 65535) throw new Error(`invalid --listen ${listen}`);
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
    bodyLimit: num(flags.bodyLimit ?? env.CLOUD_BODY_LIMIT, 1024 * 1024),
    accessTokenTtl: num(flags.accessTokenTtl ?? env.CLOUD_ACCESS_TOKEN_TTL, 3600),
    refreshTokenTtl: num(flags.refreshTokenTtl ?? env.CLOUD_REFRESH_TOKEN_TTL, 30 * 24 * 3600),
    lockoutThreshold: num(flags.lockoutThreshold ?? env.CLOUD_LOCKOUT_THRESHOLD, 5),
    passwordLifetimeDays: num(flags.passwordLifetimeDays ?? env.CLOUD_PASSWORD_LIFETIME_DAYS, 365),
    iscpQuicListen: (flags.iscpQuicListen ?? env.CLOUD_ISCP_QUIC_LISTEN) as string | undefined,
  };
}
