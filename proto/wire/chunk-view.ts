// The view of a stored chunk that the hand-written iSCP encoders read (chunk-frame.ts, and the agent's
// deferred-upload encoder): each group is one data id and a span of the chunk's buffer holding the group's
// iSCP `DataPointGroup.data_points` entries, as protobuf bytes
//   0x1a len | DataPoint { 0x08 elapsed_time (sint64, ZigZag), 0x12 len payload }
// How chunks are stored and built is the agent's business; the wire shape is iSCP's.
import { lenField } from "./pb-bits.js";
import { putVarint32 } from "./varint.js";

export interface DataId {
  name: string;
  type: string;
}

/** A stored chunk's groups as spans of its buffer (nothing per point). */
export interface ChunkView {
  count: number;
  groups: GroupSpan[];
  buffer: Buffer;
}

export interface GroupSpan {
  dataId: DataId;
  /** The UTF-8 bytes of name and type in the buffer. */
  nameStart: number;
  nameEnd: number;
  typeStart: number;
  typeEnd: number;
  count: number;
  /** The group's `data_points` entries. */
  start: number;
  end: number;
}

/** Bytes of a group's data id as a protobuf `DataID` / `StoreDataID` body (name = 1, type = 2). */
export function dataIdSize(g: GroupSpan): number {
  return lenField(g.nameEnd - g.nameStart) + lenField(g.typeEnd - g.typeStart);
}

/** Writes a group's data id as a length-prefixed `DataID` body (copied from the chunk) at p; returns the position after it. */
export function writeDataId(out: Buffer, p: number, buffer: Buffer, g: GroupSpan): number {
  p = putVarint32(out, p, dataIdSize(g));
  out[p++] = 0x0a;
  p = putVarint32(out, p, g.nameEnd - g.nameStart);
  p += buffer.copy(out, p, g.nameStart, g.nameEnd);
  out[p++] = 0x12;
  p = putVarint32(out, p, g.typeEnd - g.typeStart);
  return p + buffer.copy(out, p, g.typeStart, g.typeEnd);
}
