// Numbers out of stored payloads, for the reduced series: iSCP v2's numeric primitive types are
// big-endian (float64 is IEEE 754 `>d`, int64 `>q`), and a `json` payload counts when it is a number
// or when the named field of an object is one.

/** Reads one point's value, or undefined when the payload does not hold a number of this type. */
export type NumericReader = (payload: Uint8Array) => number | undefined;

const FIXED: Record<string, { size: number; read: (v: DataView) => number }> = {
  float64: { size: 8, read: (v) => v.getFloat64(0) },
  float32: { size: 4, read: (v) => v.getFloat32(0) },
  int64: { size: 8, read: (v) => Number(v.getBigInt64(0)) },
  uint64: { size: 8, read: (v) => Number(v.getBigUint64(0)) },
  int32: { size: 4, read: (v) => v.getInt32(0) },
  uint32: { size: 4, read: (v) => v.getUint32(0) },
  int16: { size: 2, read: (v) => v.getInt16(0) },
  uint16: { size: 2, read: (v) => v.getUint16(0) },
  int8: { size: 1, read: (v) => v.getInt8(0) },
  uint8: { size: 1, read: (v) => v.getUint8(0) },
};

export const NUMERIC_TYPES = [...Object.keys(FIXED), "json"] as const;

const decoder = new TextDecoder();

function jsonReader(field: string | undefined): NumericReader {
  const path = field ? field.split(".") : [];
  return (payload) => {
    let v: unknown;
    try {
      v = JSON.parse(decoder.decode(payload));
    } catch {
      return undefined;
    }
    for (const k of path) v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
    return typeof v === "number" && Number.isFinite(v) ? v : undefined;
  };
}

/** The reader for a data type, or undefined when the type is not numeric. */
export function numericReader(dataType: string, jsonField?: string): NumericReader | undefined {
  if (dataType === "json") return jsonReader(jsonField);
  const t = FIXED[dataType];
  if (!t) return undefined;
  return (p) => (p.byteLength === t.size ? t.read(new DataView(p.buffer, p.byteOffset, p.byteLength)) : undefined);
}
