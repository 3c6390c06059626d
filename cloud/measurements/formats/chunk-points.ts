// The points of one data ID in a stored chunk (StoreDataChunk protobuf), read in place: no message
// objects, no bigint per point. The reduced series visits every point of long series, where
// decoding each chunk into objects costs several times the reduction itself.
//   StoreDataChunk { uint32 sequence_number = 1; repeated StoreDataPointGroup data_point_groups = 2; }
//   StoreDataPointGroup { StoreDataID data_id = 1; repeated StoreDataPoint data_points = 2; }
//   StoreDataID { string name = 1; string type = 2; }   StoreDataPoint { sint64 elapsed_time = 1; bytes payload = 2; }

/** Called per point: elapsed ns (a double: exact below 2^53 ns) and where its payload lies in `buf`. */
export type PointVisitor = (elapsedNs: number, buf: Uint8Array, offset: number, length: number) => void;

const utf8 = new TextDecoder();

/** Visits the points of (type, name) in a chunk; throws on a truncated or malformed message. */
export function forEachPoint(buf: Uint8Array, type: string, name: string, visit: PointVisitor): void {
  let p = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (p >= buf.length) throw new Error("truncated varint");
      const b = buf[p++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  };
  const skip = (wire: number) => {
    if (wire === 0) varint();
    else if (wire === 1) p += 8;
    else if (wire === 2) {
      // (not `p += varint()`: that would add to p as it was before the length was read)
      const len = varint();
      p += len;
    }
    else if (wire === 5) p += 4;
    else throw new Error(`wire type ${wire}`);
    if (p > buf.length) throw new Error("truncated field");
  };
  /** The (name, type) of the group in [start, end). */
  const groupId = (start: number, end: number): [string, string] => {
    let n = "";
    let t = "";
    for (p = start; p < end; ) {
      const key = varint();
      if (key !== 0x0a) {
        skip(key & 7);
        continue;
      }
      const idLen = varint();
      const idEnd = p + idLen;
      while (p < idEnd) {
        const k = varint();
        if (k === 0x0a || k === 0x12) {
          const len = varint();
          const s = utf8.decode(buf.subarray(p, p + len));
          p += len;
          if (k === 0x0a) n = s;
          else t = s;
        } else skip(k & 7);
      }
    }
    return [n, t];
  };
  const points = (start: number, end: number) => {
    for (p = start; p < end; ) {
      const key = varint();
      if (key !== 0x12) {
        skip(key & 7);
        continue;
      }
      const pointLen = varint();
      const pointEnd = p + pointLen;
      let elapsed = 0;
      let off = p;
      let len = 0;
      while (p < pointEnd) {
        const k = varint();
        if (k === 0x08) {
          const z = varint();
          elapsed = z % 2 === 1 ? -(z + 1) / 2 : z / 2;
        } else if (k === 0x12) {
          len = varint();
          off = p;
          p += len;
        } else skip(k & 7);
      }
      if (p > end) throw new Error("truncated point");
      visit(elapsed, buf, off, len);
    }
  };
  while (p < buf.length) {
    const key = varint();
    if (key !== 0x12) {
      skip(key & 7);
      continue;
    }
    const len = varint();
    const gStart = p;
    const gEnd = p + len;
    if (gEnd > buf.length) throw new Error("truncated group");
    const [n, t] = groupId(gStart, gEnd);
    if (n === name && t === type) points(gStart, gEnd);
    p = gEnd;
  }
}
