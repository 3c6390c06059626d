// The header of an ingest journal record, in binary: its streams and, per chunk, its stream, sequence number and
// groups (data id, byte length, points, elapsed range, payload bytes). Written for every group commit and read at
// every apply: the JSON header earlier versions wrote cost an array per chunk and per group, a string of them all
// and a parse back, about a seventh of what the cloud allocated at a fleet's one-point chunks (docs/datapath.md).
//
// `[u32 0xffffffff][u8 1][u32 offset of the groups' bytes][u32 strings][strings: u32 byte length, UTF-8]
// [u32 streams][streams: u32 × 4 string indexes: stream id, session id, project, node][u32 chunks][chunks: u32 stream
// index, u32 sequence number, u32 groups, groups: u32 name index, u32 type index, u32 byte length, u32 points,
// f64 min elapsed, f64 max elapsed, u32 payload bytes]`, then the groups' bytes back to back, in order. An earlier
// version's record begins with its JSON header's length, which is never 0xffffffff.

const MARK = 0xffffffff;
const VERSION = 1;
/** A chunk's entry before its groups, and a group's entry. */
const CHUNK_BYTES = 12;
const GROUP_BYTES = 4 * 5 + 8 * 2;

export interface HeaderStream {
  streamId: string;
  sessionId: string;
  projectUuid: string;
  nodeId: string;
}

/** A group as the header gives it: `bytes` is a view of the record. */
export type OnGroup = (
  name: string,
  type: string,
  bytes: Buffer,
  count: number,
  min: number,
  max: number,
  payloadBytes: number,
) => void;

export const isBinaryRecord = (body: Buffer): boolean => body.length >= 9 && body.readUInt32BE(0) === MARK;

/** Builds a record: streams, then chunks with their groups, in order; numbers are kept flat until `finish`. */
export class RecordWriter {
  private readonly index = new Map<string, number>();
  private readonly strings: string[] = [];
  private stringBytes = 0;
  private readonly streamRefs: number[] = [];
  /** Chunks: stream, sequence number, groups; each group: name, type, length, points, min, max, payload bytes. */
  private readonly entries: number[] = [];
  private chunkCount = 0;
  private groupCount = 0;
  private readonly parts: Uint8Array[] = [];
  private partBytes = 0;
  points = 0;

  stream(s: HeaderStream): void {
    this.streamRefs.push(this.intern(s.streamId), this.intern(s.sessionId), this.intern(s.projectUuid));
    this.streamRefs.push(this.intern(s.nodeId));
  }

  chunk(stream: number, sequenceNumber: number, groups: number): void {
    this.entries.push(stream, sequenceNumber, groups);
    this.chunkCount++;
  }

  group(name: string, type: string, bytes: Uint8Array, count: number, min: number, max: number, payload: number): void {
    this.entries.push(this.intern(name), this.intern(type), bytes.length, count, min, max, payload);
    this.groupCount++;
    this.points += count;
    this.parts.push(bytes);
    this.partBytes += bytes.length;
  }

  get chunks(): number {
    return this.chunkCount;
  }

  finish(): Buffer {
    const head =
      13 +
      this.stringBytes +
      4 +
      4 * this.streamRefs.length +
      4 +
      CHUNK_BYTES * this.chunkCount +
      GROUP_BYTES * this.groupCount;
    const out = Buffer.allocUnsafe(head + this.partBytes);
    out.writeUInt32BE(MARK, 0);
    out[4] = VERSION;
    out.writeUInt32BE(head, 5);
    let p = out.writeUInt32BE(this.strings.length, 9);
    for (const s of this.strings) {
      const n = out.write(s, p + 4, "utf8");
      out.writeUInt32BE(n, p);
      p += 4 + n;
    }
    p = out.writeUInt32BE(this.streamRefs.length / 4, p);
    for (const r of this.streamRefs) p = out.writeUInt32BE(r, p);
    p = out.writeUInt32BE(this.chunkCount, p);
    const e = this.entries;
    for (let i = 0; i < e.length; ) {
      p = out.writeUInt32BE(e[i++]!, p);
      p = out.writeUInt32BE(e[i++]!, p);
      const groups = e[i++]!;
      p = out.writeUInt32BE(groups, p);
      for (let g = 0; g < groups; g++) {
        for (let k = 0; k < 4; k++) p = out.writeUInt32BE(e[i++]!, p);
        p = out.writeDoubleBE(e[i++]!, p);
        p = out.writeDoubleBE(e[i++]!, p);
        p = out.writeUInt32BE(e[i++]!, p);
      }
    }
    for (const part of this.parts) {
      out.set(part, p);
      p += part.length;
    }
    return out;
  }

  private intern(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) {
      this.index.set(s, (i = this.strings.push(s) - 1));
      this.stringBytes += 4 + Buffer.byteLength(s);
    }
    return i;
  }
}

/** Reads a record's header: its streams at once, its chunks and groups in order through callbacks. */
export class RecordReader {
  private p = 9;
  private readonly strings: string[] = [];
  readonly streams: HeaderStream[] = [];
  readonly chunkCount: number;

  constructor(private readonly body: Buffer) {
    if (body[4] !== VERSION) throw new Error(`an ingest journal record of unknown version ${body[4]}`);
    for (let n = this.u32(); n > 0; n--) {
      const len = this.u32();
      this.strings.push(body.toString("utf8", this.p, (this.p += len)));
    }
    for (let n = this.u32(); n > 0; n--) {
      const [streamId, sessionId, projectUuid, nodeId] = [this.str(), this.str(), this.str(), this.str()];
      this.streams.push({ streamId: streamId!, sessionId: sessionId!, projectUuid: projectUuid!, nodeId: nodeId! });
    }
    this.chunkCount = this.u32();
  }

  /** Each chunk (its stream's index, sequence number and group count), then each of its groups. */
  read(onChunk: (stream: number, sequenceNumber: number, groups: number) => void, onGroup: OnGroup): void {
    const b = this.body;
    let at = b.readUInt32BE(5);
    for (let n = this.chunkCount; n > 0; n--) {
      const stream = this.u32();
      const seq = this.u32();
      const groups = this.u32();
      onChunk(stream, seq, groups);
      for (let g = groups; g > 0; g--) {
        const name = this.str();
        const type = this.str();
        const len = this.u32();
        const count = this.u32();
        const min = b.readDoubleBE(this.p);
        const max = b.readDoubleBE(this.p + 8);
        this.p += 16;
        onGroup(name, type, b.subarray(at, (at += len)), count, min, max, this.u32());
      }
    }
  }

  private str(): string {
    return this.strings[this.u32()]!;
  }

  private u32(): number {
    const v = this.body.readUInt32BE(this.p);
    this.p += 4;
    return v;
  }
}
