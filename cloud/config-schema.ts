// The cloud peer's settings as one effect Schema struct: each entry names its flag (also its key in the --config
// file), its environment variable, its value schema and its default. Adding a setting is one entry in SETTINGS.
import path from "node:path";
import * as Schema from "effect/Schema";
import {
  DatabaseUrl,
  expecting,
  Directory,
  Durability,
  Int,
  IscpLimitsSetting,
  Listen,
  LogLevel,
  NatsUrl,
  PemFile,
  ProxyList,
  Text,
} from "./config-values.js";
import { DEFAULT_LIMITS } from "./iscp/broker/options.js";
import { MapTilesUrl } from "./console/schemas.js";

/** How a setting is named outside: `--<flag>` on the command line and `<flag>:` in the file, `env` in the environment. */
export interface SettingMeta {
  flag: string;
  env?: string;
  help: string;
  /** Placeholder in --help, e.g. "host:port". */
  arg?: string;
  /** Never a command-line flag (visible to every user in `ps`), never echoed, masked by `config show`. */
  secret?: true;
  /** The value is not repeated in errors: the problem names the bad part itself (e.g. one entry of a list). */
  noEcho?: true;
}

const withDefault = <A, I>(schema: Schema.Schema<A, I>, value: A | (() => A), meta: SettingMeta) => ({
  ...meta,
  field: Schema.optionalWith(schema, {
    default: typeof value === "function" ? (value as () => A) : () => value,
    exact: true,
  }),
});
const optional = <A, I>(schema: Schema.Schema<A, I>, meta: SettingMeta) => ({
  ...meta,
  field: Schema.optionalWith(schema, { exact: true }),
});

/** Every setting, keyed by its name in CloudConfig (and in loadConfig's flags). Order is the order of --help. */
export const SETTINGS = {
  listen: withDefault(
    Listen,
    { host: "127.0.0.1", port: 8080 },
    {
      flag: "listen",
      env: "CLOUD_LISTEN",
      arg: "host:port",
      help: "host:port to listen on (default 127.0.0.1:8080; port 0 picks a free one)",
    },
  ),
  dataDir: withDefault(Directory, () => path.resolve("./data/cloud"), {
    flag: "data",
    env: "CLOUD_DATA",
    arg: "dir",
    help: "data directory (default ./data/cloud)",
  }),
  database: withDefault(DatabaseUrl, "sqlite:", {
    flag: "database",
    env: "CLOUD_DATABASE",
    arg: "url",
    noEcho: true,
    help: "where cloud state lives: sqlite: (default: cloud.db in the data directory) or postgres://user@host:port/db (PostgreSQL; a password is better given in PGPASSWORD than in the URL)",
  }),
  nats: optional(NatsUrl, {
    flag: "nats",
    env: "CLOUD_NATS",
    arg: "url",
    noEcho: true,
    help: "nats://host:4222[,nats://...]: several cloud peers on one PostgreSQL database tell each other changes and relay iSCP over this NATS (default: off, one peer on its own)",
  }),
  publicUrl: optional(Text, {
    flag: "public-url",
    env: "CLOUD_PUBLIC_URL",
    arg: "url",
    help: "base URL in mails and tokens (default http://<listen>)",
  }),
  mapTilesUrl: optional(MapTilesUrl, {
    flag: "map-tiles-url",
    env: "CLOUD_MAP_TILES_URL",
    arg: "url",
    help: "map tiles under the console's tracks, an http(s) URL with {z}, {x} and {y} (XYZ tiles, e.g. https://tiles.example.com/{z}/{x}/{y}.png; default: none, the track alone)",
  }),
  mapTilesAttribution: optional(Text, {
    flag: "map-tiles-attribution",
    env: "CLOUD_MAP_TILES_ATTRIBUTION",
    arg: "text",
    help: 'the tiles\' attribution the console shows under the map, e.g. "© OpenStreetMap contributors"',
  }),
  tlsCert: optional(PemFile, {
    flag: "tls-cert",
    env: "CLOUD_TLS_CERT",
    arg: "file",
    help: "PEM file of the certificate (chain) to serve HTTPS and WSS on --listen, reloaded on SIGHUP; also QUIC's without --iscp-quic-cert (default: plain HTTP)",
  }),
  tlsKey: optional(PemFile, {
    flag: "tls-key",
    env: "CLOUD_TLS_KEY",
    arg: "file",
    help: "PEM file of the --tls-cert certificate's private key",
  }),
  adminPassword: optional(Text, {
    flag: "admin-password",
    env: "CLOUD_ADMIN_PASSWORD",
    secret: true,
    help: "password of the super user `admin` created at the first start (else a temporary one is printed and kept in <data>/initial-admin-password until it is changed)",
  }),
  smtpUrl: optional(Text, {
    flag: "smtp-url",
    env: "CLOUD_SMTP_URL",
    secret: true,
    help: "send mail over SMTP, e.g. smtp://user:pass@host:587 (else .eml files under <data>/outbox/)",
  }),
  mailFrom: withDefault(Text, "cloud-peer@localhost", {
    flag: "mail-from",
    env: "CLOUD_MAIL_FROM",
    arg: "address",
    help: "sender address of mails (default cloud-peer@localhost)",
  }),
  logLevel: withDefault(LogLevel, "info", {
    flag: "log-level",
    env: "CLOUD_LOG_LEVEL",
    arg: "level",
    help: "pino log level (default info)",
  }),
  logFormat: withDefault(expecting(Schema.Literal("json", "text"), "expected json or text"), "json", {
    flag: "log-format",
    env: "CLOUD_LOG_FORMAT",
    arg: "format",
    help: "json (default: one JSON object a line) or text (one readable line each)",
  }),
  bodyLimit: withDefault(Int(1), 1024 * 1024, {
    flag: "body-limit",
    env: "CLOUD_BODY_LIMIT",
    arg: "bytes",
    help: "maximum request body in bytes (default 1048576)",
  }),
  accessTokenTtl: withDefault(Int(1), 3600, {
    flag: "access-token-ttl",
    env: "CLOUD_ACCESS_TOKEN_TTL",
    arg: "seconds",
    help: "access-token lifetime in seconds (default 3600)",
  }),
  refreshTokenTtl: withDefault(Int(1), 30 * 24 * 3600, {
    flag: "refresh-token-ttl",
    env: "CLOUD_REFRESH_TOKEN_TTL",
    arg: "seconds",
    help: "refresh-token lifetime in seconds (default 2592000)",
  }),
  lockoutThreshold: withDefault(Int(1), 5, {
    flag: "lockout-threshold",
    env: "CLOUD_LOCKOUT_THRESHOLD",
    arg: "n",
    help: "failed password sign-ins of one user name before each further attempt waits (default 5)",
  }),
  signInWaitSeconds: withDefault(Int(1), 1, {
    flag: "sign-in-wait",
    env: "CLOUD_SIGN_IN_WAIT",
    arg: "seconds",
    help: "wait after the last free failed sign-in, doubling with each further failure up to --sign-in-max-wait (default 1)",
  }),
  signInAddressFailures: withDefault(Int(1), 20, {
    flag: "sign-in-address-failures",
    env: "CLOUD_SIGN_IN_ADDRESS_FAILURES",
    arg: "n",
    help: "failed password sign-ins from one client address, any user names, before each further attempt from it waits (default 20)",
  }),
  signInMaxWaitSeconds: withDefault(Int(1), 900, {
    flag: "sign-in-max-wait",
    env: "CLOUD_SIGN_IN_MAX_WAIT",
    arg: "seconds",
    help: "longest wait after failed sign-ins (default 900)",
  }),
  signInQuietSeconds: withDefault(Int(1), 43_200, {
    flag: "sign-in-quiet",
    env: "CLOUD_SIGN_IN_QUIET",
    arg: "seconds",
    help: "failed sign-ins of a user name or an address are forgotten after this long without a new one (default 43200)",
  }),
  passwordLifetimeDays: withDefault(Int(0), 365, {
    flag: "password-lifetime-days",
    env: "CLOUD_PASSWORD_LIFETIME_DAYS",
    arg: "days",
    help: "days until a password expires (default 365; 0 = never)",
  }),
  metricsListen: optional(Listen, {
    flag: "metrics-listen",
    env: "CLOUD_METRICS_LISTEN",
    arg: "host:port",
    help: "host:port serving GET /metrics to anyone who reaches it (default: off; /metrics on the main port then serves super users and this host only)",
  }),
  iscpQuicListen: optional(Text, {
    flag: "iscp-quic-listen",
    env: "CLOUD_ISCP_QUIC_LISTEN",
    arg: "host:port",
    help: "UDP host:port for iSCP over QUIC (default: off)",
  }),
  iscpQuicCert: optional(PemFile, {
    flag: "iscp-quic-cert",
    env: "CLOUD_ISCP_QUIC_CERT",
    arg: "file",
    help: "PEM file of the QUIC certificate (chain), with the key (default: --tls-cert's, else self-signed under <data>/quic)",
  }),
  iscpQuicKey: optional(PemFile, {
    flag: "iscp-quic-key",
    env: "CLOUD_ISCP_QUIC_KEY",
    arg: "file",
    help: "PEM file of the QUIC certificate's private key",
  }),
  iscpLimits: withDefault(
    IscpLimitsSetting,
    {},
    {
      flag: "iscp-limits",
      env: "CLOUD_ISCP_LIMITS",
      arg: "name=value,...",
      help: `iSCP broker limits over the defaults (${Object.keys(DEFAULT_LIMITS).join(", ")}; docs/iscp.md)`,
    },
  ),
  shutdownGraceMs: withDefault(Int(0), 10_000, {
    flag: "shutdown-grace-ms",
    arg: "ms",
    help: "how long shutdown waits for in-flight requests before cutting their connections (default 10000)",
  }),
  maxConnections: withDefault(Int(0), 0, {
    flag: "max-connections",
    env: "CLOUD_MAX_CONNECTIONS",
    arg: "n",
    help: "open connections at most, all clients together; more are closed at once (default 0: four fifths of the process's open-file limit)",
  }),
  maxConnectionsPerAddress: withDefault(Int(0), 2048, {
    flag: "max-connections-per-address",
    env: "CLOUD_MAX_CONNECTIONS_PER_ADDRESS",
    arg: "n",
    help: "open connections at most from one client address (an IPv6 /64 counts as one address; --trusted-proxies are not capped; 0 = no cap; default 2048)",
  }),
  httpHeadersTimeout: withDefault(Int(1), 10, {
    flag: "http-headers-timeout",
    env: "CLOUD_HTTP_HEADERS_TIMEOUT",
    arg: "seconds",
    help: "time a connection has for a request's headers, a new connection's first request and a TLS handshake included; idle connections are closed after it (default 10)",
  }),
  httpRequestTimeout: withDefault(Int(1), 60, {
    flag: "http-request-timeout",
    env: "CLOUD_HTTP_REQUEST_TIMEOUT",
    arg: "seconds",
    help: "time a whole request (headers and body) has to arrive; a slower one gets 408 (default 60; raise it with --body-limit for slow links)",
  }),
  trustedProxies: withDefault(ProxyList, [], {
    flag: "trusted-proxies",
    env: "CLOUD_TRUSTED_PROXIES",
    arg: "list",
    noEcho: true,
    help: "reverse proxies (IPs, CIDR ranges, comma-separated) whose X-Forwarded-For gives the client address for sign-in limits (default: none, the header is ignored)",
  }),
  commitTrace: optional(Text, {
    flag: "commit-trace",
    env: "CLOUD_COMMIT_TRACE",
    arg: "file",
    help: 'append "<CLOCK_MONOTONIC ns> <points>" per durable batch of iSCP chunks (committed, or held by the ingest journal: when its acks go) to this file, to time runs from outside (default: off)',
  }),
  ingestJournal: withDefault(expecting(Schema.Literal("off", "on"), "expected on or off"), "on", {
    flag: "ingest-journal",
    env: "CLOUD_INGEST_JOURNAL",
    arg: "on|off",
    help: "on (default): acknowledge iSCP chunks once a journal beside the database holds them, and store many commits' chunks together a moment later, which shortens the acks' wait for a fleet of slow edges; off: store every commit in the database before its ack (SQLite; PostgreSQL always does that; docs/measurements.md)",
  }),
  durability: withDefault(Durability, "power-loss", {
    flag: "durability",
    env: "CLOUD_DURABILITY",
    arg: "level",
    help: "what an acknowledged chunk survives: power-loss (default: fsync before the ack) or process-crash (no fsync per commit; faster, a power cut may lose the last acked chunks; docs/security.md)",
  }),
};

export type SettingName = keyof typeof SETTINGS;
type Fields = { [K in SettingName]: (typeof SETTINGS)[K]["field"] };

/** The struct every source (flags, environment, file) is decoded with. */
export const Settings = Schema.Struct(
  Object.fromEntries(Object.entries(SETTINGS).map(([k, s]) => [k, s.field])) as Fields,
);
export type Settings = Schema.Schema.Type<typeof Settings>;

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];
export const meta = (name: SettingName): SettingMeta => SETTINGS[name];
