// FIFO format `iscp-v2-compat` (intdash Edge Agent 2's FIFO data format): frames back to back, each
//   u32le seconds | u32le nanoseconds | u16le type length | u16le name length | u32le payload length
//   | type (UTF-8) | name (UTF-8) | payload
// The format has no sync marker: a header is accepted only when nanoseconds < 1e9, the type is
// 1..255 printable ASCII bytes, the name has no control characters and the payload fits maxPayload;
// otherwise the decoder skips one byte and tries again (resynchronisation).
import type { DataPoint } from "../datapoint.js";
import { type DecoderOptions, type EncodeResult, type FrameEncoder, elapsedFrom, elapsedToParts } from "./codec.js";
import { dataNameError } from "../filters/pattern.js";
import { MAX_DATA_TYPE_LENGTH } from "../../proto/wire/data-id-rules.js";
import { FramePoint } from "./frame-point.js";
import { StringCache } from "./string-cache.js";
import { StreamDecoder, validNameBytes, validTypeBytes } from "./stream-decoder.js";

export const ISCP_V2_HEADER = 16;
export const MAX_TYPE_LENGTH = MAX_DATA_TYPE_LENGTH;

export class IscpV2CompatDecoder extends StreamDecoder {
  private readonly types = new StringCache();
  private readonly names: StringCache;
  /** The type and name bytes of the last accepted frame and their strings: a stream repeats them frame after frame. */
  private lastId: Buffer = Buffer.alloc(0);
  private lastTl = -1;
  private lastType = "";
  private lastName = "";

  constructor(opts: DecoderOptions) {
    super(opts);
    this.names = new StringCache(opts.namePrefix ?? "", (n) => dataNameError(n) === undefined);
  }

  protected parse(buf: Buffer, out: DataPoint[]): number {
    const n = buf.length;
    const base = this.clockBase;
    const srcId = this.srcId;
    let off = 0;
    while (n - off >= ISCP_V2_HEADER) {
      const sec = (buf[off]! | (buf[off + 1]! << 8) | (buf[off + 2]! << 16)) + buf[off + 3]! * 0x1000000;
      const nsec = (buf[off + 4]! | (buf[off + 5]! << 8) | (buf[off + 6]! << 16)) + buf[off + 7]! * 0x1000000;
      const tl = buf[off + 8]! | (buf[off + 9]! << 8);
      const nl = buf[off + 10]! | (buf[off + 11]! << 8);
      const pl = (buf[off + 12]! | (buf[off + 13]! << 8) | (buf[off + 14]! << 16)) + buf[off + 15]! * 0x1000000;
      const ts = off + ISCP_V2_HEADER;
      const ns = ts + tl;
      const ps = ns + nl;
      const end = ps + pl;
      // The same type and name as the last frame (checked and decoded then): only the header's numbers are checked.
      if (
        tl === this.lastTl &&
        ps <= n &&
        nsec < 1e9 &&
        pl <= this.maxPayload &&
        end <= n &&
        this.sameId(buf, ts, ps)
      ) {
        this.inGarbage = false;
        off = end;
        out.push(new FramePoint(this.lastName, this.lastType, buf, ps, pl, elapsedFrom(sec, nsec, base), srcId));
        this.stats.frames++;
        continue;
      }
      if (
        nsec >= 1e9 ||
        tl === 0 ||
        tl > MAX_TYPE_LENGTH ||
        pl > this.maxPayload ||
        !validTypeBytes(buf, ts, Math.min(ns, n)) ||
        !validNameBytes(buf, ns, Math.min(ps, n))
      ) {
        this.skip();
        off++;
        continue;
      }
      if (end > n) {
        this.need = end - off;
        return off;
      }
      this.inGarbage = false;
      off = end;
      const name = this.names.get(buf, ns, ps);
      if (name === undefined) {
        this.stats.invalidNames++;
        continue;
      }
      const type = this.types.get(buf, ts, ns)!;
      this.remember(buf, ts, ps, tl, type, name);
      out.push(new FramePoint(name, type, buf, ps, pl, elapsedFrom(sec, nsec, base), srcId));
      this.stats.frames++;
    }
    this.need = ISCP_V2_HEADER;
    return off;
  }

  private sameId(buf: Buffer, start: number, end: number): boolean {
    const id = this.lastId;
    if (end - start !== id.length) return false;
    for (let i = 0; i < id.length; i++) if (id[i] !== buf[start + i]) return false;
    return true;
  }

  private remember(buf: Buffer, start: number, end: number, tl: number, type: string, name: string): void {
    this.lastId = Buffer.from(buf.subarray(start, end));
    this.lastTl = tl;
    this.lastType = type;
    this.lastName = name;
  }
}

/** Encodes points as iscp-v2-compat frames with elapsed-time timestamps (the downstream direction). */
export class IscpV2CompatEncoder implements FrameEncoder {
  private readonly typeBytes = new Map<string, Buffer>();
  private readonly nameBytes = new Map<string, Buffer>();

  encode(points: readonly DataPoint[], stripPrefix = ""): EncodeResult {
    const strip = stripPrefix.length;
    const types: Buffer[] = [];
    const names: Buffer[] = [];
    const keep: DataPoint[] = [];
    let size = 0;
    let unsupported = 0;
    for (const p of points) {
      if (strip > 0 && !p.name.startsWith(stripPrefix)) continue;
      const t = bytesOf(this.typeBytes, p.type);
      const nm = bytesOf(this.nameBytes, strip > 0 ? p.name.slice(strip) : p.name);
      if (t.length === 0 || t.length > MAX_TYPE_LENGTH || nm.length > 0xffff || p.payload.length > 0xffffffff) {
        unsupported++;
        continue;
      }
      keep.push(p);
      types.push(t);
      names.push(nm);
      size += ISCP_V2_HEADER + t.length + nm.length + p.payload.length;
    }
    const buffer = Buffer.allocUnsafe(size);
    let off = 0;
    for (let i = 0; i < keep.length; i++) {
      const p = keep[i]!;
      const t = types[i]!;
      const nm = names[i]!;
      const [sec, nsec] = elapsedToParts(p.elapsedNs);
      buffer.writeUInt32LE(sec, off);
      buffer.writeUInt32LE(nsec, off + 4);
      buffer.writeUInt16LE(t.length, off + 8);
      buffer.writeUInt16LE(nm.length, off + 10);
      buffer.writeUInt32LE(p.payload.length, off + 12);
      off += ISCP_V2_HEADER;
      off += t.copy(buffer, off);
      off += nm.copy(buffer, off);
      buffer.set(p.payload, off);
      off += p.payload.length;
    }
    return { buffer, frames: keep.length, unsupported };
  }
}

/** Cached UTF-8 bytes of names and types (a bounded map: cleared when it grows past 4096 entries). */
export function bytesOf(cache: Map<string, Buffer>, s: string): Buffer {
  let b = cache.get(s);
  if (b === undefined) {
    if (cache.size >= 4096) cache.clear();
    b = Buffer.from(s, "utf8");
    cache.set(s, b);
  }
  return b;
}

/** Encodes one frame with a raw (sec, nsec) timestamp: used by connectors (device clock readings). */
export function encodeIscpV2Frame(sec: number, nsec: number, type: string, name: string, payload: Uint8Array): Buffer {
  const t = Buffer.from(type, "utf8");
  const nm = Buffer.from(name, "utf8");
  const b = Buffer.allocUnsafe(ISCP_V2_HEADER + t.length + nm.length + payload.length);
  b.writeUInt32LE(sec >>> 0, 0);
  b.writeUInt32LE(nsec, 4);
  b.writeUInt16LE(t.length, 8);
  b.writeUInt16LE(nm.length, 10);
  b.writeUInt32LE(payload.length, 12);
  t.copy(b, 16);
  nm.copy(b, 16 + t.length);
  b.set(payload, 16 + t.length + nm.length);
  return b;
}
