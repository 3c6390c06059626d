// Chunks relayed to other cloud peers go over NATS in batches: all chunks of one source node that this peer
// receives in one turn of the event loop share one message per subject (a fleet of edges sending one-point
// chunks would otherwise cost a NATS message, a header and a publish per chunk on both sides). A batch keeps
// the chunks in the order they were received, and NATS keeps one publisher's order per subject, so a remote
// downstream sees each upstream's chunks in order and each once.
//
// A batch: `[u32 header length][header JSON][StreamChunk bodies back to back]`; the header names the project
// and node, the upstreams (stream id, session id) and per chunk its upstream's index, sequence number and body
// length. A group received as raw bytes (enc=proto) is written as they are, without decoding its points.
import { iscp2 } from "../../../proto/wire/message.js";
import { putVarint, varintSize } from "../../../proto/wire/varint.js";
import { uuidToBytes } from "../../../proto/wire/uuid.js";
import type { RelayGroup, UpstreamRef } from "../broker/downstream.js";
import { nodeKey } from "../broker/hub.js";

/** A batch is sent once it holds this many bytes, well below NATS's default 1 MiB message limit. */
export const BATCH_BYTES = 256 * 1024;

export interface BatchHeader {
  p: string;
  n: string;
  /** Upstreams: [stream id, session id]. */
  u: Array<[string, string]>;
  /** Chunks: [index in u, sequence number, body length]. */
  c: Array<[number, number, number]>;
}

/** A StreamChunk body; groups with received bytes are copied as they are (`data_points` entries). */
export function encodeStreamChunk(seq: number, groups: RelayGroup[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 1 + varintSize(seq);
  for (const g of groups) {
    const dataId = iscp2.DataID.encode({ name: g.ref.name, type: g.ref.type }).finish();
    const points = g.raw ? g.raw.raw : iscp2.DataPointGroup.encode({ dataPoints: g.points }).finish();
    const groupLen = 1 + varintSize(dataId.length) + dataId.length + points.length;
    total += 1 + varintSize(groupLen) + groupLen;
    parts.push(dataId, points);
  }
  const out = new Uint8Array(total);
  out[0] = 0x08; // sequence_number
  let p = putVarint(out, 1, seq);
  for (let i = 0; i < parts.length; i += 2) {
    const dataId = parts[i]!;
    const points = parts[i + 1]!;
    out[p++] = 0x12; // data_point_groups
    p = putVarint(out, p, 1 + varintSize(dataId.length) + dataId.length + points.length);
    out[p++] = 0x0a; // data_id
    p = putVarint(out, p, dataId.length);
    out.set(dataId, p);
    p += dataId.length;
    out.set(points, p);
    p += points.length;
  }
  return out;
}

interface OpenBatch {
  header: BatchHeader;
  upIndex: Map<string, number>;
  bodies: Uint8Array[];
  bytes: number;
}

/** Collects relayed chunks per subject and publishes each subject's batch once per turn (or once full). */
export class RelayBatcher {
  private readonly open = new Map<string, OpenBatch>();
  private scheduled = false;

  constructor(private readonly publish: (subject: string, data: Uint8Array) => void) {}

  add(subject: string, projectUuid: string, up: UpstreamRef, seq: number, groups: RelayGroup[]): void {
    let b = this.open.get(subject);
    if (!b)
      this.open.set(
        subject,
        (b = { header: { p: projectUuid, n: up.nodeId, u: [], c: [] }, upIndex: new Map(), bodies: [], bytes: 0 }),
      );
    let ui = b.upIndex.get(up.id);
    if (ui === undefined) {
      ui = b.header.u.push([up.id, up.sessionId]) - 1;
      b.upIndex.set(up.id, ui);
    }
    const body = encodeStreamChunk(seq, groups);
    b.header.c.push([ui, seq, body.length]);
    b.bodies.push(body);
    b.bytes += body.length;
    if (b.bytes >= BATCH_BYTES) return this.send(subject, b);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Publishes every open batch. */
  flush(): void {
    this.scheduled = false;
    for (const [subject, b] of this.open) this.send(subject, b);
  }

  private send(subject: string, b: OpenBatch): void {
    this.open.delete(subject);
    const h = Buffer.from(JSON.stringify(b.header));
    const out = Buffer.allocUnsafe(4 + h.length + b.bytes);
    out.writeUInt32BE(h.length, 0);
    h.copy(out, 4);
    let p = 4 + h.length;
    for (const body of b.bodies) {
      out.set(body, p);
      p += body.length;
    }
    this.publish(subject, out);
  }
}

/** The chunks of a batch, in order: their upstream, project, sequence number and StreamChunk. */
export function* readBatch(
  data: Uint8Array,
): Generator<{ up: UpstreamRef; projectUuid: string; seq: number; chunk: iscp2.StreamChunk }> {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const n = b.readUInt32BE(0);
  const h = JSON.parse(b.subarray(4, 4 + n).toString()) as BatchHeader;
  const key = nodeKey(h.p, h.n);
  const ups: UpstreamRef[] = h.u.map(([id, sessionId]) => ({
    id,
    idBytes: uuidToBytes(id),
    sessionId,
    nodeId: h.n,
    nodeKey: key,
  }));
  let p = 4 + n;
  for (const [ui, seq, len] of h.c) {
    const chunk = iscp2.StreamChunk.decode(b.subarray(p, p + len));
    p += len;
    yield { up: ups[ui]!, projectUuid: h.p, seq, chunk };
  }
}
