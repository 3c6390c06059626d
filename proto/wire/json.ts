// Canonical proto3 JSON over protobufjs reflection, shaped like protobuf-ts' toJson/fromJson
// (what @aptpod/iscp-ts speaks with enc=json): lowerCamelCase names, default values omitted
// (oneof members are always written), 64-bit integers as decimal strings, bytes as base64,
// enums by name, map keys as strings. On input snake_case names, numeric enums and numbers for
// 64-bit fields are accepted too; unknown fields are ignored (the "ignore unknown" parser option).
import protobuf from "protobufjs";
import Long from "long";

const LONG_TYPES = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);
const INT_TYPES = new Set(["int32", "uint32", "sint32", "fixed32", "sfixed32", ...LONG_TYPES]);

export class JsonCodecError extends Error {}

type Obj = Record<string, unknown>;

function isDefaultScalar(field: protobuf.Field, v: unknown): boolean {
  if (field.resolvedType instanceof protobuf.Enum) return v === 0;
  switch (field.type) {
    case "string":
      return v === "";
    case "bool":
      return v === false;
    case "bytes":
      return (v as Uint8Array).length === 0;
    default:
      if (LONG_TYPES.has(field.type)) return isZeroLong(v);
      return v === 0;
  }
}

function isZeroLong(v: unknown): boolean {
  if (typeof v === "number") return v === 0;
  if (typeof v === "bigint") return v === 0n;
  if (typeof v === "string") return v === "0";
  const l = v as { low: number; high: number };
  return l.low === 0 && l.high === 0;
}

function scalarToJson(field: protobuf.Field, v: unknown): unknown {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Enum) return rt.valuesById[v as number] ?? v;
  if (rt instanceof protobuf.Type) return messageToJson(rt, v as Obj);
  if (field.type === "bytes") return Buffer.from(v as Uint8Array).toString("base64");
  if (LONG_TYPES.has(field.type)) return String(v);
  return v;
}

/** A message object (decoded class instance or plain object) to its canonical JSON value. */
export function messageToJson(type: protobuf.Type, msg: Obj): Obj {
  const out: Obj = {};
  for (const field of type.fieldsArray) {
    const v = msg[field.name];
    if (v === undefined || v === null) continue;
    const name = field.name; // pbjs already converted names to lowerCamelCase
    if (field.map) {
      const entries = Object.entries(v as Obj);
      if (entries.length === 0) continue;
      const m: Obj = {};
      for (const [k, ev] of entries) m[k] = scalarToJson(field, ev);
      out[name] = m;
    } else if (field.repeated) {
      const arr = v as unknown[];
      if (arr.length === 0) continue;
      out[name] = arr.map((e) => scalarToJson(field, e));
    } else if (field.resolvedType instanceof protobuf.Type) {
      out[name] = messageToJson(field.resolvedType, v as Obj);
    } else {
      // Decoded instances carry defaults on the prototype; only own or oneof-selected values count.
      if (field.partOf) {
        if ((msg as Record<string, unknown>)[field.partOf.name] !== field.name && !Object.hasOwn(msg, field.name))
          continue;
      } else if (isDefaultScalar(field, v)) continue;
      out[name] = scalarToJson(field, v);
    }
  }
  return out;
}

function camel(s: string): string {
  return s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function scalarFromJson(field: protobuf.Field, v: unknown, path: string): unknown {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Type) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new JsonCodecError(`${path}: expected object`);
    return messageFromJson(rt, v as Obj, path);
  }
  if (rt instanceof protobuf.Enum) {
    if (typeof v === "number" && Number.isInteger(v)) return v;
    if (typeof v === "string" && v in rt.values) return rt.values[v];
    throw new JsonCodecError(`${path}: unknown enum value`);
  }
  if (field.type === "bytes") {
    if (typeof v !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(v))
      throw new JsonCodecError(`${path}: expected base64`);
    return new Uint8Array(Buffer.from(v, "base64"));
  }
  if (field.type === "string") {
    if (typeof v !== "string") throw new JsonCodecError(`${path}: expected string`);
    return v;
  }
  if (field.type === "bool") {
    if (typeof v !== "boolean") throw new JsonCodecError(`${path}: expected boolean`);
    return v;
  }
  if (INT_TYPES.has(field.type)) {
    const unsigned = field.type.startsWith("u") || field.type.startsWith("fixed");
    if (LONG_TYPES.has(field.type)) {
      if ((typeof v === "string" && /^-?\d+$/.test(v)) || (typeof v === "number" && Number.isInteger(v))) {
        return Long.fromString(String(v), unsigned);
      }
      throw new JsonCodecError(`${path}: expected integer`);
    }
    const n = typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v;
    if (typeof n !== "number" || !Number.isInteger(n) || (unsigned && n < 0))
      throw new JsonCodecError(`${path}: expected integer`);
    return n;
  }
  if (typeof v === "number") return v;
  if (v === "NaN" || v === "Infinity" || v === "-Infinity") return Number(v);
  throw new JsonCodecError(`${path}: expected number`);
}

/** A canonical JSON value to a plain message object that the static encoders accept. */
export function messageFromJson(type: protobuf.Type, json: Obj, path = type.name): Obj {
  const out: Obj = {};
  const seenOneofs = new Set<string>();
  for (const [key, v] of Object.entries(json)) {
    const field = type.fields[key] ?? type.fields[camel(key)];
    if (!field || v === null) continue;
    const p = `${path}.${field.name}`;
    if (field.map) {
      if (typeof v !== "object" || Array.isArray(v)) throw new JsonCodecError(`${p}: expected object`);
      const m: Record<string, unknown> = {};
      for (const [k, ev] of Object.entries(v as Obj)) {
        if (INT_TYPES.has((field as unknown as protobuf.MapField).keyType) && !/^-?\d+$/.test(k))
          throw new JsonCodecError(`${p}: bad map key`);
        m[k] = scalarFromJson(field, ev, `${p}[${k}]`);
      }
      out[field.name] = m;
    } else if (field.repeated) {
      if (!Array.isArray(v)) throw new JsonCodecError(`${p}: expected array`);
      out[field.name] = v.map((e, i) => scalarFromJson(field, e, `${p}[${i}]`));
    } else {
      if (field.partOf) {
        if (seenOneofs.has(field.partOf.name))
          throw new JsonCodecError(`${p}: two members of oneof ${field.partOf.name}`);
        seenOneofs.add(field.partOf.name);
      }
      out[field.name] = scalarFromJson(field, v, p);
    }
  }
  return out;
}

/** Loads a reflection root from a pbjs JSON descriptor, with all types resolved. */
export function loadRoot(descriptor: protobuf.INamespace): protobuf.Root {
  const root = protobuf.Root.fromJSON(descriptor);
  root.resolveAll();
  return root;
}
