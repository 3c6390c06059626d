// The points of one data ID in a stored chunk (StoreDataChunk protobuf), read in place: no message
// objects, no bigint per point. The reduced series visits every point of long series, where
// decoding each chunk into objects costs several times the reduction itself.
//   StoreDataChunk { uint32 sequence_number = 1; repeated StoreDataPointGroup data_point_groups = 2; }
//   StoreDataPointGroup { StoreDataID data_id = 1; repeated StoreDataPoint data_points = 2; }
//   StoreDataID { string name = 1; string type = 2; }   StoreDataPoint { sint64 elapsed_time = 1; bytes payload = 2; }
import { unzigzag } from "../../../proto/wire/pb-bits.js";
import { readVarint64, rv } from "../../../proto/wire/varint.js";

/** Called per point: elapsed ns (a double: exact below 2^53 ns) and where its payload lies in `buf`. */
export type PointVisitor = (elapsedNs: number, buf: Uint8Array, offset: number, length: number) => void;

const utf8 = new TextDecoder();
const TWO32 = 4294967296;

/**
 * The field last read by nextField (module scratch: no object per field): where its value starts and
 * where the field ends. A varint field's value is also left in `rv` (varint.ts).
 */
const f = { start: 0, end: 0 };

/** Reads the field at p within [p, end) into `f` and returns its key; throws on a truncated or malformed field. */
function nextField(buf: Uint8Array, p: number, end: number): number {
  // One-byte keys and lengths (the common case) skip the general varint reader.
  let key = p < end ? buf[p]! : 0x80;
  if (key < 0x80) p++;
  else {
    readVarint64(buf, p, end);
    key = rv.lo;
    p = rv.pos;
  }
  let q: number;
  switch (key & 7) {
    case 0:
      readVarint64(buf, p, end);
      q = rv.pos;
      break;
    case 1:
      q = p + 8;
      break;
    case 2: {
      const b = p < end ? buf[p]! : 0x80;
      if (b < 0x80) q = ++p + b;
      else {
        readVarint64(buf, p, end);
        p = rv.pos;
        q = p + rv.hi * TWO32 + rv.lo;
      }
      break;
    }
    case 5:
      q = p + 4;
      break;
    default:
      throw new Error(`wire type ${key & 7}`);
  }
  if (q > end) throw new Error("truncated field");
  f.start = p;
  f.end = q;
  return key;
}

/** Whether the group in [start, end) has the data ID (name, type). */
function groupIs(buf: Uint8Array, start: number, end: number, type: string, name: string): boolean {
  let n = "";
  let t = "";
  for (let p = start; p < end; ) {
    const key = nextField(buf, p, end);
    p = f.end;
    if (key !== 0x0a) continue;
    for (let q = f.start; q < p; ) {
      const k = nextField(buf, q, p);
      q = f.end;
      if (k === 0x0a) n = utf8.decode(buf.subarray(f.start, f.end));
      else if (k === 0x12) t = utf8.decode(buf.subarray(f.start, f.end));
    }
  }
  return n === name && t === type;
}

/** Visits the points of the group in [start, end). */
function visitPoints(buf: Uint8Array, start: number, end: number, visit: PointVisitor): void {
  for (let p = start; p < end; ) {
    const key = nextField(buf, p, end);
    p = f.end;
    if (key !== 0x12) continue;
    let elapsed = 0;
    let off = f.start;
    let len = 0;
    for (let q = f.start; q < p; ) {
      const k = nextField(buf, q, p);
      q = f.end;
      if (k === 0x08) elapsed = unzigzag(rv.lo, rv.hi);
      else if (k === 0x12) (off = f.start), (len = q - f.start);
    }
    visit(elapsed, buf, off, len);
  }
}

/** Visits the points of (type, name) in a chunk; throws on a truncated or malformed message. */
export function forEachPoint(buf: Uint8Array, type: string, name: string, visit: PointVisitor): void {
  for (let p = 0; p < buf.length; ) {
    const key = nextField(buf, p, buf.length);
    p = f.end;
    if (key !== 0x12) continue;
    const start = f.start;
    if (groupIs(buf, start, p, type, name)) visitPoints(buf, start, p, visit);
  }
}
