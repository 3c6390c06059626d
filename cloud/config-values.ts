// The value schemas of the cloud peer's settings (cloud/config-schema.ts): how a flag's, variable's or file's value
// is read and checked, each failing with one `expected ...` the caller prefixes with the setting's name and source.
import fs from "node:fs";
import path from "node:path";
import * as ParseResult from "effect/ParseResult";
import * as Schema from "effect/Schema";
import { parseTrustedProxies } from "./http/client-address.js";
import { DEFAULT_LIMITS, type IscpLimits } from "./iscp/broker/options.js";
import { DURABILITIES } from "./database/db.js";

/** A schema whose failures all read as one `expected ...` (the caller adds the setting's name and source). */
export const expecting = <A, I>(schema: Schema.Schema<A, I>, expected: string) =>
  schema.annotations({ message: () => ({ message: expected, override: true }) });

/** A decode that fails with its own message (`problem` returns a reason, or undefined when `v` is fine). */
const parsed = <A>(
  to: Schema.Schema<A>,
  parse: (v: unknown) => A | { problem: string },
  encode: (a: A) => unknown = (a) => a,
) =>
  Schema.transformOrFail(Schema.Unknown, to, {
    strict: false,
    decode: (v, _, ast) => {
      try {
        const out = parse(v);
        return typeof out === "object" && out !== null && "problem" in out
          ? ParseResult.fail(new ParseResult.Type(ast, v, out.problem))
          : ParseResult.succeed(out);
      } catch (e) {
        return ParseResult.fail(new ParseResult.Type(ast, v, (e as Error).message));
      }
    },
    encode: (a) => ParseResult.succeed(encode(a as A)),
  });

export const Text = expecting(Schema.String, "expected a text");

/** An integer from text (environment, flags) or a number (the file); a typo must not silently become NaN. */
export const Int = (min: number) =>
  parsed(Schema.Number, (v) => {
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v.trim()) : NaN;
    return Number.isSafeInteger(n) && n >= min ? n : { problem: `expected an integer >= ${min}` };
  });

export interface HostPort {
  host: string;
  port: number;
}

/** `host:port` (`[v6]:port`; a bare port means 127.0.0.1); port 0 picks a free one. */
export const Listen = parsed(
  Schema.Struct({ host: Schema.String, port: Schema.Number }),
  (v): HostPort | { problem: string } => {
    const s = typeof v === "number" ? String(v) : typeof v === "string" ? v : "";
    const idx = s.lastIndexOf(":");
    const port = s.slice(idx + 1);
    if (!/^\d+$/.test(port) || Number(port) > 65535) return { problem: "expected host:port" };
    return { host: idx > 0 ? s.slice(0, idx).replace(/^\[|\]$/g, "") : "127.0.0.1", port: Number(port) };
  },
  (a) => (a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`),
);

export const Directory = Schema.transform(Text, Schema.String, {
  strict: true,
  decode: (s) => path.resolve(s),
  encode: (s) => s,
});

/** `sqlite:` (the embedded database in the data directory) or `postgres://user@host:port/db` (PostgreSQL). */
export const DatabaseUrl = parsed(Schema.String, (v) => {
  if (typeof v !== "string") return { problem: "expected sqlite: or postgres://..." };
  if (v === "sqlite:") return v;
  if (!/^postgres(ql)?:\/\//.test(v)) return { problem: "expected sqlite: or a postgres:// URL" };
  try {
    new URL(v);
  } catch {
    return { problem: "expected a postgres:// URL" };
  }
  return v;
});

/** One or more `nats://` (or `tls://`) server URLs, comma-separated: the cluster bus of several peers. */
export const NatsUrl = parsed(Schema.String, (v) => {
  if (typeof v !== "string" || v.trim() === "") return { problem: "expected nats://host:port" };
  for (const u of v.split(",").map((x) => x.trim())) {
    if (!/^(nats|tls|ws|wss):\/\//.test(u)) return { problem: "expected nats://host:port (several comma-separated)" };
    try {
      new URL(u);
    } catch {
      return { problem: "expected nats://host:port" };
    }
  }
  return v.trim();
});

export const LogLevel = expecting(
  Schema.Literal("fatal", "error", "warn", "info", "debug", "trace", "silent"),
  "expected fatal, error, warn, info, debug, trace or silent",
);

export const Durability = expecting(Schema.Literal(...DURABILITIES), `expected ${DURABILITIES.join(" or ")}`);

/**
 * A PEM file an operator names, checked at start rather than at the first QUIC handshake. The value is never
 * echoed when it looks like PEM text itself (a key must not end up in an error message).
 */
export const PemFile = parsed(Schema.String, (v) => {
  if (typeof v !== "string") return { problem: "expected the path of a PEM file" };
  if (v.includes("-----BEGIN")) return { problem: "expected the path of a PEM file, not PEM text" };
  const file = path.resolve(v);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    return { problem: `cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
  return text.includes("-----BEGIN") ? file : { problem: "the file is not PEM" };
});

/** Broker limits: `name=value,...` (environment, flag) or a mapping (file); an unknown name stops the start. */
export const IscpLimitsSetting = parsed(Schema.Record({ key: Schema.String, value: Schema.Number }), (v) => {
  const pairs: Array<[string, unknown]> =
    typeof v === "string"
      ? v
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean)
          .map((p) =>
            p.indexOf("=") > 0 ? [p.slice(0, p.indexOf("=")).trim(), p.slice(p.indexOf("=") + 1).trim()] : [p, ""],
          )
      : typeof v === "object" && v !== null && !Array.isArray(v)
        ? Object.entries(v)
        : [];
  if (pairs.length === 0 && typeof v !== "string" && !(typeof v === "object" && v !== null))
    return { problem: "expected name=value,... or a mapping" };
  const out: Partial<IscpLimits> = {};
  for (const [name, value] of pairs) {
    if (!(name in DEFAULT_LIMITS))
      return { problem: `unknown limit "${name}" (known: ${Object.keys(DEFAULT_LIMITS).join(", ")})` };
    if (value === "") return { problem: `"${name}" needs name=value` };
    const min = name === "expiryGraceFloorSec" ? 0 : 1;
    const n = typeof value === "number" ? value : Number(String(value));
    if (!Number.isSafeInteger(n) || n < min)
      return { problem: `${name} "${String(value)}": expected an integer >= ${min}` };
    out[name as keyof IscpLimits] = n;
  }
  return out;
}) as unknown as Schema.Schema<Partial<IscpLimits>, unknown>;

/** Addresses and CIDR ranges, comma-separated text or a list. */
export const ProxyList = parsed(Schema.Array(Schema.String), (v) => {
  const list =
    typeof v === "string" ? v : Array.isArray(v) && v.every((e) => typeof e === "string") ? v.join(",") : undefined;
  if (list === undefined) return { problem: "expected addresses or CIDR ranges" };
  try {
    return parseTrustedProxies(list);
  } catch (e) {
    return { problem: (e as Error).message.replace(/^invalid CLOUD_TRUSTED_PROXIES /, "") };
  }
}) as unknown as Schema.Schema<string[], unknown>;
