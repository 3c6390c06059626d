// The rules a data ID (name, type) must follow, the same on every path that takes data in: the edge
// agent's device connectors and filters, the broker's upstreams, the cloud's REST chunk upload. A data
// ID one of them takes must not be refused (or mangled) by another: the agent writes types and names
// to device connectors with 16-bit lengths, matches names with `/`-levels and the `#`/`+` wildcards,
// and the stores keep them as UTF-8 (a lone UTF-16 surrogate has no UTF-8 form).

/** Longest data type, in characters (ASCII): the agent's FIFO frames give it one byte's worth. */
export const MAX_DATA_TYPE_LENGTH = 255;
/** Longest data name, in UTF-8 bytes: a FIFO frame's 16-bit name length. */
export const MAX_DATA_NAME_BYTES = 0xffff;

/** Returns an error message, or undefined when `name` follows the data-name rules. */
export function dataNameError(name: string): string | undefined {
  if (name.length === 0) return "data name must not be empty";
  if (name.startsWith("/") || name.endsWith("/")) return "data name must not start or end with `/`";
  if (name.includes("//")) return "data name must not contain `//`";
  if (name.includes("#") || name.includes("+")) return "data name must not contain `#` or `+`";
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return "data name must not contain control characters";
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = name.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
      else return "data name must be well-formed Unicode (no lone UTF-16 surrogate)";
    }
  }
  // At most 3 UTF-8 bytes per UTF-16 unit: only long names need counting.
  if (name.length * 3 > MAX_DATA_NAME_BYTES && Buffer.byteLength(name, "utf8") > MAX_DATA_NAME_BYTES)
    return `data name must be at most ${MAX_DATA_NAME_BYTES} bytes of UTF-8`;
  return undefined;
}

/** Returns an error message, or undefined when `type` follows the data-type rules (`float64`, `h264_frame/idr_frame`). */
export function dataTypeError(type: string): string | undefined {
  if (type.length === 0) return "data type must not be empty";
  if (type.length > MAX_DATA_TYPE_LENGTH) return `data type must be at most ${MAX_DATA_TYPE_LENGTH} characters`;
  for (let i = 0; i < type.length; i++) {
    const c = type.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return "data type must be printable ASCII without spaces";
  }
  return undefined;
}

/** The first rule the data ID breaks, or undefined. */
export function dataIdError(name: string, type: string): string | undefined {
  return dataTypeError(type) ?? dataNameError(name);
}
