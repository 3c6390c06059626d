// The header of an ingest journal record (journal-codec.ts) as bytes. A commit of a fleet holds a chunk of each of
// hundreds of streams, and its header is made for every commit: as JSON it took about 5 % of the peer's CPU at
// 30,000 one-point chunks/s (docs/decisions.md). The binary header writes each distinct text once, into a scratch
// buffer kept between records, and is read back into the same shape as the JSON one, which records written by
// earlier versions (left in a journal by a crash) still use: a JSON header begins with "{", this one with its
// version byte.
//
// Layout (big-endian): u8 version, u32 offset of the text table, u32 streams, per stream 4 × u32 text (stream id,
// session id, project uuid, node id), u32 chunks, per chunk u32 stream, u32 sequence number, u32 groups, per group
// u32 name, u32 type, u32 byte length, u32 points, f64 min elapsed, f64 max elapsed, u32 payload bytes; then the
// text table: u32 texts, per text u32 byte length and its UTF-8 bytes.

/** A group in a record: [name, type, byte length, points, min elapsed, max elapsed, payload bytes]. */
export type GroupEntry = [string, string, number, number?, number?, number?, number?];

export interface JournalHeader {
  /** Streams: [stream id, session id, project uuid, node id]. */
  u: Array<[string, string, string, string]>;
  /** Chunks: [index in u, sequence number, groups]. */
  c: Array<[number, number, GroupEntry[]]>;
}

const VERSION = 1;
const CHUNK_BYTES = 12;
const GROUP_BYTES = 36;

/** Writes a header in a buffer that grows as needed and is reused by the next header. */
export class HeaderWriter {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private at = 0;
  private readonly texts = new Map<string, number>();
  /** The previous group's name and type (a fleet's chunks mostly repeat them) and their texts. */
  private lastName: string | undefined;
  private lastType: string | undefined;
  private lastNameText = 0;
  private lastTypeText = 0;
  private chunksAt = 0;
  private chunks = 0;

  /** Starts a header of `streams` streams (their texts next, with `stream`). */
  begin(streams: number): void {
    this.texts.clear();
    this.lastName = this.lastType = undefined;
    this.at = 0;
    this.chunks = 0;
    this.room(9 + 16 * streams + 4);
    this.buf[this.at++] = VERSION;
    this.at += 4; // the text table's offset, written at the end
    this.u32(streams);
  }

  stream(streamId: string, sessionId: string, projectUuid: string, nodeId: string): void {
    this.u32(this.text(streamId));
    this.u32(this.text(sessionId));
    this.u32(this.text(projectUuid));
    this.u32(this.text(nodeId));
  }

  /** After the streams: the chunks follow. */
  beginChunks(): void {
    this.chunksAt = this.at;
    this.u32(0);
  }

  chunk(stream: number, sequenceNumber: number, groups: number): void {
    this.room(CHUNK_BYTES + GROUP_BYTES * groups);
    this.u32(stream);
    this.u32(sequenceNumber);
    this.u32(groups);
    this.chunks++;
  }

  group(name: string, type: string, length: number, points: number, min: number, max: number, payload: number): void {
    if (name !== this.lastName) this.lastNameText = this.text((this.lastName = name));
    if (type !== this.lastType) this.lastTypeText = this.text((this.lastType = type));
    this.u32(this.lastNameText);
    this.u32(this.lastTypeText);
    this.u32(length);
    this.u32(points);
    this.buf.writeDoubleBE(min, this.at);
    this.buf.writeDoubleBE(max, this.at + 8);
    this.at += 16;
    this.u32(payload);
  }

  /** The header's bytes (a view of the scratch buffer, valid until the next `begin`). */
  end(): Buffer {
    this.buf.writeUInt32BE(this.chunks, this.chunksAt);
    this.buf.writeUInt32BE(this.at, 1);
    this.room(4);
    this.u32(this.texts.size);
    for (const t of this.texts.keys()) {
      this.room(4 + 3 * t.length);
      const n = this.buf.write(t, this.at + 4, "utf8");
      this.buf.writeUInt32BE(n, this.at);
      this.at += 4 + n;
    }
    return this.buf.subarray(0, this.at);
  }

  private text(t: string): number {
    let i = this.texts.get(t);
    if (i === undefined) this.texts.set(t, (i = this.texts.size));
    return i;
  }

  private u32(n: number): void {
    this.buf.writeUInt32BE(n, this.at);
    this.at += 4;
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
}

/** The header at the start of `h` (a record's header bytes), binary or an earlier version's JSON. */
export function parseHeader(h: Buffer): JournalHeader {
  if (h[0] !== VERSION) return JSON.parse(h.toString()) as JournalHeader;
  let p = h.readUInt32BE(1);
  const texts: string[] = new Array(h.readUInt32BE(p));
  p += 4;
  for (let i = 0; i < texts.length; i++) {
    const n = h.readUInt32BE(p);
    texts[i] = h.toString("utf8", p + 4, p + 4 + n);
    p += 4 + n;
  }
  const text = (at: number) => texts[h.readUInt32BE(at)]!;
  p = 5;
  const u: JournalHeader["u"] = new Array(h.readUInt32BE(p));
  p += 4;
  for (let i = 0; i < u.length; i++, p += 16) u[i] = [text(p), text(p + 4), text(p + 8), text(p + 12)];
  const c: JournalHeader["c"] = new Array(h.readUInt32BE(p));
  p += 4;
  for (let i = 0; i < c.length; i++) {
    const groups: GroupEntry[] = new Array(h.readUInt32BE(p + 8));
    c[i] = [h.readUInt32BE(p), h.readUInt32BE(p + 4), groups];
    p += CHUNK_BYTES;
    for (let g = 0; g < groups.length; g++, p += GROUP_BYTES)
      groups[g] = [
        text(p),
        text(p + 4),
        h.readUInt32BE(p + 8),
        h.readUInt32BE(p + 12),
        h.readDoubleBE(p + 16),
        h.readDoubleBE(p + 24),
        h.readUInt32BE(p + 32),
      ];
  }
  return { u, c };
}
