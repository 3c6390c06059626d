// logger-msg DType <-> iSCP data id table. logger-msg has no data name: each DType defines how the
// name is derived from its body. To support a new DType, add an entry here (decode + encode).

export interface DTypeCodec {
  dtype: number;
  /** The iSCP data type points of this DType get. */
  iscpType: string;
  /** Splits a body into (name, payload); undefined when the body is malformed. */
  decode(body: Buffer): { name: string; payload: Uint8Array } | undefined;
  /** Builds the body from a name and payload; undefined when the point cannot be expressed. */
  encode(name: string, payload: Uint8Array): Buffer | undefined;
}

/** Body = ID length (1 byte) + ID + data; the ID is the data name. */
function withId(dtype: number, iscpType: string): DTypeCodec {
  return {
    dtype,
    iscpType,
    decode(body) {
      if (body.length < 1) return undefined;
      const idLen = body[0]!;
      if (1 + idLen > body.length) return undefined;
      return { name: body.toString("utf8", 1, 1 + idLen), payload: body.subarray(1 + idLen) };
    },
    encode(name, payload) {
      const id = Buffer.from(name, "utf8");
      if (id.length > 255) return undefined;
      const b = Buffer.allocUnsafe(1 + id.length + payload.length);
      b[0] = id.length;
      id.copy(b, 1);
      b.set(payload, 1 + id.length);
      return b;
    },
  };
}

export const DTYPE_STRING = 0x1d;

export const DTYPE_TABLE: readonly DTypeCodec[] = [withId(DTYPE_STRING, "string")];

/** Unknown DTypes become type `bytes` named `logger-msg/<dtype in decimal>`, the whole body as payload. */
export const UNKNOWN_DTYPE_TYPE = "bytes";
export const UNKNOWN_DTYPE_NAME_PREFIX = "logger-msg/";

export const byDType = new Map<number, DTypeCodec>(DTYPE_TABLE.map((c) => [c.dtype, c]));
export const byIscpType = new Map<string, DTypeCodec>(DTYPE_TABLE.map((c) => [c.iscpType, c]));
