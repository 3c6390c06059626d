// Settings of the cloud peer process: flags win over environment variables, which win over the --config file, which
// wins over defaults. Every source is decoded with the one schema of cloud/config-schema.ts.
import fs from "node:fs";
import * as Schema from "effect/Schema";
import YAML from "yaml";
import { yamlErrorLine } from "../lib/yaml-error.js";
import { decodeInput } from "../lib/http/decode.js";
import { QUIC_NAMES, readTlsPair, TLS_NAMES } from "./http/tls-files.js";
import { SETTING_NAMES, SETTINGS, Settings, meta, type SettingName } from "./config-schema.js";

export type CloudConfig = Omit<Settings, "listen" | "publicUrl"> & {
  listenHost: string;
  listenPort: number;
  publicUrl: string;
};

/** Flags keyed by setting name (e.g. `dataDir`), as commander or a test gives them; `config` names a YAML file. */
export type ConfigInput = { [K in SettingName]?: string | number | undefined } & { config?: string };

/** Every environment variable the cloud peer reads (listed by `cloud-peer --help`). */
export const ENV_VARS: ReadonlyArray<readonly [name: string, what: string]> = SETTING_NAMES.flatMap((n) => {
  const { env, help } = meta(n);
  return env ? [[env, help] as const] : [];
});

type Source = { kind: "flag" } | { kind: "env" } | { kind: "file"; file: string };

/** Where a bad value came from, in the words the operator used: `--flag`, `CLOUD_X` or `key in FILE`. */
function where(name: SettingName, source: Source, value: string): string {
  const { flag, env } = meta(name);
  if (source.kind === "env") return `${env}${value}`;
  if (source.kind === "flag") return `--${flag}${value}`;
  return `${flag}${value} in ${source.file}`;
}

/** The value as it may appear in an error: never a secret, never PEM text (a key must not reach a log). */
function echo(name: SettingName, v: unknown): string {
  if (meta(name).secret || meta(name).noEcho) return "";
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s === undefined || s.includes("-----BEGIN") ? "" : ` "${s}"`;
}

/** The --config file's settings by name; an unknown key, bad YAML or an unreadable file stops the start. */
export function readConfigFile(file: string): Partial<Record<SettingName, unknown>> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new Error(
      `invalid --config "${file}": cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw new Error(`invalid --config "${file}": not YAML (${yamlErrorLine(e, text)})`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc))
    throw new Error(`invalid --config "${file}": expected a mapping of settings (key: value)`);
  const byFlag = new Map(SETTING_NAMES.map((n) => [meta(n).flag, n]));
  const unknown = Object.keys(doc).filter((k) => !byFlag.has(k));
  if (unknown.length > 0)
    throw new Error(
      `invalid --config "${file}": unknown key${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} (known: ${[...byFlag.keys()].join(", ")})`,
    );
  return Object.fromEntries(Object.entries(doc).map(([k, v]) => [byFlag.get(k)!, v]));
}

/** The decoded settings (before CloudConfig's derived fields); `config show` prints these. */
export function resolveSettings(flags: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): Settings {
  const file = flags.config !== undefined && flags.config !== "" ? readConfigFile(flags.config) : {};
  const raw: Record<string, unknown> = {};
  const sources = new Map<SettingName, Source>();
  const given = (v: unknown) => v !== undefined && v !== null && v !== "";
  for (const name of SETTING_NAMES) {
    const envName = meta(name).env;
    const pick: Array<[unknown, Source]> = [
      [flags[name], { kind: "flag" }],
      [envName ? env[envName] : undefined, { kind: "env" }],
      [file[name], { kind: "file", file: flags.config ?? "" }],
    ];
    const hit = pick.find(([v]) => given(v));
    if (hit) {
      raw[name] = hit[0];
      sources.set(name, hit[1]);
    }
  }
  const decoded = decodeInput(Settings, raw, "error");
  if (decoded.ok) return decoded.value;
  const issue = decoded.issues[0]!;
  const name = issue.path[0] as SettingName;
  const separator = meta(name).noEcho ? " " : ": ";
  throw new Error(
    `invalid ${where(name, sources.get(name) ?? { kind: "flag" }, echo(name, raw[name]))}${separator}${issue.message}`,
  );
}

/** The settings as `config show` prints them (keys are the flag names, secrets masked). */
export function showSettings(settings: Settings): Record<string, unknown> {
  const encoded = Schema.encodeSync(Settings)(settings) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) {
    const v = encoded[name];
    if (v === undefined) continue;
    out[SETTINGS[name].flag] = SETTINGS[name].secret
      ? "********"
      : name === "database"
        ? maskPassword(String(v))
        : name === "nats"
          ? String(v)
              .split(",")
              .map((u) => maskPassword(u.trim()))
              .join(",")
          : v;
  }
  return out;
}

/** A database URL with its password (if the operator put one there) masked. */
function maskPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password === "") return url;
    u.password = "********";
    return u.toString();
  } catch {
    return url;
  }
}

/** CLOUD_DURABILITY alone (the bench reads it): a typo must not silently weaken (or strengthen) what an ack promises. */
export function parseDurability(v: string | undefined): Settings["durability"] {
  return resolveSettings({}, { CLOUD_DURABILITY: v }).durability;
}

export function loadConfig(flags: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): CloudConfig {
  const { listen, publicUrl, ...rest } = resolveSettings(flags, env);
  for (const [names, cert, key] of [
    [TLS_NAMES, rest.tlsCert, rest.tlsKey],
    [QUIC_NAMES, rest.iscpQuicCert, rest.iscpQuicKey],
  ] as const) {
    if ((cert === undefined) !== (key === undefined))
      throw new Error(`${names.cert} and ${names.key} go together: set both or neither`);
    // A key of another certificate (say, one renewal behind) stops the start, not the first handshake.
    if (cert !== undefined && key !== undefined) readTlsPair({ cert, key }, names);
  }
  const scheme = rest.tlsCert ? "https" : "http";
  return {
    ...rest,
    listenHost: listen.host,
    listenPort: listen.port,
    publicUrl: (publicUrl ?? `${scheme}://${listen.host}:${listen.port}`).replace(/\/$/, ""),
  };
}
