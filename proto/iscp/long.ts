// int64 fields: protobufjs decodes them as Long (or number) and its writer silently turns a bigint
// into 0, so values cross this boundary only through these helpers.
import Long from "long";

export type Int64 = Long | number | string | bigint | null | undefined;

export function toLong(v: bigint | number, unsigned = false): Long {
  return typeof v === "bigint" ? Long.fromString(v.toString(), unsigned) : Long.fromNumber(v, unsigned);
}

export function toBigInt(v: Int64): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return BigInt(Math.trunc(v));
  if (typeof v === "string") return BigInt(v);
  return BigInt(v.toString());
}

/** Unix epoch nanoseconds now, as a Long for sint64 fields. */
export function nowNanos(): Long {
  return toLong(BigInt(Date.now()) * 1_000_000n);
}
