// Numbers out of stored payloads, for the reduced series: iSCP v2's numeric primitive types are
// big-endian (float64 is IEEE 754 `>d`, int64 `>q`), and a `json` payload counts when it is a number
// or when the field a JSON pointer (RFC 6901, `/a/b`, `/list/0`) names in it is one; a `string` payload
// holding JSON counts the same way when a field is named.

/** Reads the value of the payload at buf[off, off + len), or undefined when it is not a number of this type. */
export type NumericReader = (buf: Uint8Array, off: number, len: number) => number | undefined;

// 64-bit integers as two halves: exact up to 2^53, like any double, without a bigint per point.
const FIXED: Record<string, { size: number; read: (v: DataView, o: number) => number }> = {
  float64: { size: 8, read: (v, o) => v.getFloat64(o) },
  float32: { size: 4, read: (v, o) => v.getFloat32(o) },
  int64: { size: 8, read: (v, o) => v.getInt32(o) * 0x100000000 + v.getUint32(o + 4) },
  uint64: { size: 8, read: (v, o) => v.getUint32(o) * 0x100000000 + v.getUint32(o + 4) },
  int32: { size: 4, read: (v, o) => v.getInt32(o) },
  uint32: { size: 4, read: (v, o) => v.getUint32(o) },
  int16: { size: 2, read: (v, o) => v.getInt16(o) },
  uint16: { size: 2, read: (v, o) => v.getUint16(o) },
  int8: { size: 1, read: (v, o) => v.getInt8(o) },
  uint8: { size: 1, read: (v, o) => v.getUint8(o) },
};

const decoder = new TextDecoder();

/** The reference tokens of a JSON pointer (`/a~1b/c` -> ["a/b", "c"]); "" is the whole document. */
export const pointerTokens = (pointer: string): string[] =>
  pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));

function jsonReader(field: string | undefined): NumericReader {
  const path = pointerTokens(field ?? "");
  return (buf, off, len) => {
    let v: unknown;
    try {
      v = JSON.parse(decoder.decode(buf.subarray(off, off + len)));
    } catch {
      return undefined;
    }
    for (const k of path)
      v = v !== null && typeof v === "object" && Object.hasOwn(v, k) ? (v as Record<string, unknown>)[k] : undefined;
    return typeof v === "number" && Number.isFinite(v) ? v : undefined;
  };
}

/** The reader for a data type, or undefined when the type is not numeric. */
export function numericReader(dataType: string, jsonField?: string): NumericReader | undefined {
  if (dataType === "json" || (dataType === "string" && jsonField !== undefined)) return jsonReader(jsonField);
  const t = FIXED[dataType];
  if (!t) return undefined;
  // One view per chunk buffer, not per point.
  let last: Uint8Array | undefined;
  let view: DataView | undefined;
  return (buf, off, len) => {
    if (len !== t.size) return undefined;
    if (buf !== last) (last = buf), (view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength));
    return t.read(view!, off);
  };
}
