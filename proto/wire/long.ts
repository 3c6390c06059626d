// int64 fields: protobufjs decodes them as Long (or number) and its writer silently turns a bigint
// into 0, so values cross this boundary only through these helpers.
import Long from "long";

export type Int64 = Long | number | string | bigint | null | undefined;

export function toLong(v: bigint | number, unsigned = false): Long {
  if (typeof v === "number") return Long.fromNumber(v, unsigned);
  return Long.fromBits(Number(v & 0xffffffffn) | 0, Number((v >> 32n) & 0xffffffffn) | 0, unsigned);
}

export function toBigInt(v: Int64): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return BigInt(Math.trunc(v));
  if (typeof v === "string") return BigInt(v);
  // Small values (the usual elapsed times) skip the bigint arithmetic.
  if (v.high === 0 && v.low >= 0) return BigInt(v.low);
  const bits = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  return v.unsigned ? bits : BigInt.asIntN(64, bits);
}

/** Unix epoch nanoseconds now, as a Long for sint64 fields. */
export function nowNanos(): Long {
  return toLong(BigInt(Date.now()) * 1_000_000n);
}
