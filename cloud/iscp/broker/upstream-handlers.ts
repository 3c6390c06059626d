// Upstream requests on a broker connection: open, chunk, metadata (base time), close, resume.
import { iscp2, QoS, ResultCode } from "../../../proto/wire/message.js";
import { nowNanos, toBigInt } from "../../../proto/wire/long.js";
import type { RawDataId } from "../../../proto/wire/chunk-scan.js";
import { bytesToUuid, newUuid } from "../../../proto/wire/uuid.js";
import { dataIdError } from "../../../proto/wire/data-id-rules.js";
import type { ServerConn } from "./conn.js";
import type { RelayGroup, UpstreamRef } from "./downstream.js";
import type { HookResult, UpstreamInfo } from "./options.js";
import { ackDuplicate, ReceivedGroup, storeNew, StoreTurn } from "./chunk-store.js";
import type { HeldTurn } from "./intake.js";
import { nodeKey } from "./hub.js";
import { refusalFor } from "./refusals.js";
import { UpstreamStream, type DataIdRef } from "./upstream.js";
import { snapshotOf, takeOver } from "./upstream-takeover.js";

const refs = new WeakMap<UpstreamStream, UpstreamRef>();
function refOf(u: UpstreamStream): UpstreamRef {
  let r = refs.get(u);
  if (!r)
    refs.set(
      u,
      (r = {
        id: u.id,
        idBytes: u.idBytes,
        sessionId: u.info.sessionId,
        nodeId: u.info.nodeId,
        nodeKey: nodeKey(u.info.projectUuid, u.info.nodeId),
      }),
    );
  return r;
}

async function runHook(fn: () => HookResult | Promise<HookResult>): Promise<{ code: iscp2.ResultCode; str: string }> {
  try {
    const r = await fn();
    if (r && r.resultCode !== ResultCode.SUCCEEDED) return { code: r.resultCode, str: r.resultString ?? "refused" };
    return { code: ResultCode.SUCCEEDED, str: "OK" };
  } catch (e) {
    return { code: ResultCode.PROCESS_FAILED, str: e instanceof Error ? e.message : "hook failed" };
  }
}

const validQos = (q: number) => q === QoS.UNRELIABLE || q === QoS.RELIABLE || q === QoS.PARTIAL;

export async function open(c: ServerConn, req: iscp2.IUpstreamOpenRequest): Promise<void> {
  const L = c.hub.limits;
  const refuse = (code: iscp2.ResultCode, why: string) =>
    c.sendMessage(refusalFor("upstreamOpenRequest", req as Record<string, unknown>, code, why)!);
  const qos = req.qos ?? QoS.UNRELIABLE;
  const dataIds = req.dataIds ?? [];
  if (!c.nodeId) return refuse(ResultCode.NO_NODE_ID, "an upstream needs a node id");
  if (c.upstreamSlotsUsed >= L.maxUpstreamsPerConn)
    return refuse(ResultCode.TOO_MANY_STREAMS, `at most ${L.maxUpstreamsPerConn} upstreams`);
  if (!validQos(qos)) return refuse(ResultCode.DESIRED_QOS_NOT_SUPPORTED, `qos ${qos}`);
  if ((req.ackInterval ?? 0) > L.maxAckIntervalMs)
    return refuse(ResultCode.TOO_LONG_ACK_INTERVAL, `ack_interval above ${L.maxAckIntervalMs} ms`);
  if ((req.expiryInterval ?? 0) > L.maxExpiryIntervalSec)
    return refuse(ResultCode.TOO_LONG_EXPIRY_INTERVAL, `expiry_interval above ${L.maxExpiryIntervalSec} s`);
  if (dataIds.length > L.maxDataIdAliases)
    return refuse(ResultCode.TOO_MANY_DATA_ID_ALIASES, `at most ${L.maxDataIdAliases} data ids`);
  for (const [i, d] of dataIds.entries()) {
    const bad = dataIdError(d.name ?? "", d.type ?? "");
    if (bad) return refuse(ResultCode.INVALID_DATA_ID, `data_ids[${i}]: ${bad}`);
  }
  const { uuid, bytes } = newUuid();
  const info: UpstreamInfo = {
    streamId: uuid,
    sessionId: req.sessionId ?? "",
    projectUuid: c.projectUuid,
    nodeId: c.nodeId,
    subject: c.subject,
    qos,
    persist: req.extensionFields?.persist ?? false,
  };
  if (c.hub.hooks.onUpstreamOpen) {
    // The slot is taken before the hook runs: opens pipelined meanwhile see it taken, so they cannot
    // all pass the limit check and exceed it once their hooks return. Given back when the hook settles,
    // in the same turn as the stream (if any) is added.
    c.upstreamOpensPending++;
    let r;
    try {
      r = await runHook(() => c.hub.hooks.onUpstreamOpen!(info));
    } finally {
      c.upstreamOpensPending--;
    }
    if (r.code !== ResultCode.SUCCEEDED) return refuse(r.code, r.str);
    if (!c.isOpen) return;
  }
  const u = new UpstreamStream(
    uuid,
    bytes,
    info,
    req.ackInterval ?? 0,
    c.hub.expiryMs(req.expiryInterval ?? 0),
    L.maxDataIdAliases,
    L.maxOutgoingFrameBytes,
  );
  for (const d of dataIds) u.assignAlias(d.name!, d.type!);
  u.alias = c.allocUpstreamAlias();
  const states = c.hub.hooks.upstreamStates;
  if (states) {
    // Recorded before the client learns the stream, so that another instance can resume it from the first chunk.
    // Without the record the stream still works here; only a resume elsewhere would not find it.
    c.upstreamOpensPending++;
    try {
      await states.opened(snapshotOf(u));
    } catch (e) {
      c.hub.logger.warn(
        { err: String(e), streamId: uuid },
        "iscp upstream state not recorded: it can be resumed on this instance only",
      );
    } finally {
      c.upstreamOpensPending--;
    }
    if (!c.isOpen) return void states.removed(uuid).catch(() => undefined);
  }
  u.owner = c;
  c.upstreams.set(u.alias, u);
  c.hub.addUpstream(u);
  c.sendMessage({
    upstreamOpenResponse: {
      requestId: req.requestId ?? 0,
      assignedStreamId: bytes,
      assignedStreamIdAlias: u.alias,
      dataIdAliases: u.aliasTable(),
      serverTime: nowNanos(),
      resultCode: ResultCode.SUCCEEDED,
      resultString: "OK",
    },
  });
  u.scheduleAck(); // aliases that did not fit in the response
  c.hub.publishMetadata(c.projectUuid, c.nodeId, { upstreamOpen: { streamId: bytes, sessionId: info.sessionId, qos } });
}

/** One received data point group, from the scan path (RawPointGroup) or a protobufjs decode. */
export interface GroupIn {
  dataId?: RawDataId;
  dataIdAlias: number;
  count: number;
  payloadBytes: number;
  readonly dataPoints: iscp2.IDataPoint[];
}
export interface ChunkIn {
  streamIdAlias: number;
  sequenceNumber: number;
  dataIds: RawDataId[];
  groups: GroupIn[];
}

/** A decoded UpstreamChunk in the scan path's shape. */
export function chunkIn(msg: iscp2.IUpstreamChunk): ChunkIn {
  const idOf = (d: iscp2.IDataID) => ({ name: d.name ?? "", type: d.type ?? "" });
  return {
    streamIdAlias: msg.streamIdAlias ?? 0,
    sequenceNumber: msg.streamChunk?.sequenceNumber ?? 0,
    dataIds: (msg.dataIds ?? []).map(idOf),
    groups: (msg.streamChunk?.dataPointGroups ?? []).map((g) => {
      const dataPoints = g.dataPoints ?? [];
      let payloadBytes = 0;
      for (const p of dataPoints) payloadBytes += p.payload?.length ?? 0;
      return {
        dataId: g.dataId ? idOf(g.dataId) : undefined,
        dataIdAlias: g.dataIdAlias ?? 0,
        count: dataPoints.length,
        payloadBytes,
        dataPoints,
      };
    }),
  };
}

export function chunk(c: ServerConn, msg: ChunkIn): void {
  receive(c, msg, false);
}

/**
 * A chunk read while storage is behind on its connection (intake.ts): received and relayed now, so live data does
 * not wait for storage; its store (or its answer) is left for its turn, after the chunks read before it.
 */
export function chunkAhead(c: ServerConn, msg: ChunkIn): HeldTurn {
  return receive(c, msg, true)!;
}

/** What a chunk read ahead leaves for its turn: an answer, the store of a new chunk, or a duplicate's ack. */
function later(run: () => void): HeldTurn {
  return { run, drop: () => undefined };
}

/** A chunk's result, given now or (read ahead) in its turn. */
function answer(u: UpstreamStream, seq: number, ahead: boolean, code: iscp2.ResultCode, str: string) {
  return ahead ? later(() => u.addResult(seq, code, str)) : void u.addResult(seq, code, str);
}

function receive(c: ServerConn, msg: ChunkIn, ahead: boolean): HeldTurn | undefined {
  const seq = msg.sequenceNumber;
  const u = c.upstreams.get(msg.streamIdAlias);
  if (!u) {
    const refusal = refusalFor(
      "upstreamChunk",
      { streamIdAlias: msg.streamIdAlias, streamChunk: { sequenceNumber: seq } },
      ResultCode.STREAM_NOT_FOUND,
      "unknown stream alias",
    )!;
    return ahead ? later(() => c.sendMessage(refusal)) : void c.sendMessage(refusal);
  }
  // Sequence numbers start at 1 (iscp-ts, iscp-go; REST chunks too): a 0 would otherwise pass as a duplicate, acked but lost.
  if (seq === 0) return answer(u, seq, ahead, ResultCode.PROTOCOL_ERROR, "sequence numbers start at 1");
  for (const d of msg.dataIds) {
    if (dataIdError(d.name, d.type)) continue; // no alias: a group using this data id is refused below
    const known = u.aliasCount;
    const a = u.assignAlias(d.name, d.type);
    if (a && u.aliasCount > known && c.hub.hooks.upstreamStates) announceRecorded(c, u, a, d);
    else if (a) u.announceAlias(a);
  }
  const groups: RelayGroup[] = [];
  let points = 0;
  let payloadBytes = 0;
  for (const g of msg.groups) {
    let ref: DataIdRef | undefined;
    if (g.dataId) {
      const { name, type } = g.dataId;
      const bad = dataIdError(name, type);
      if (bad) return answer(u, seq, ahead, ResultCode.INVALID_DATA_ID, bad);
      ref = u.refFor(name, type);
    } else if (g.dataIdAlias) {
      ref = u.resolveAlias(g.dataIdAlias);
      if (!ref)
        return answer(u, seq, ahead, ResultCode.INVALID_DATA_ID_ALIAS, `unknown data id alias ${g.dataIdAlias}`);
    } else {
      return answer(u, seq, ahead, ResultCode.INVALID_DATA_ID, "group without data id");
    }
    points += g.count;
    payloadBytes += g.payloadBytes;
    groups.push(new ReceivedGroup(ref, g));
  }
  // A duplicate is never relayed again. Its ack says no more than the original's storage did (chunk-store.ts).
  if (!u.seqs.add(seq))
    return ahead ? later(() => ackDuplicate(c, u, seq, groups)) : void ackDuplicate(c, u, seq, groups);
  u.addPoints(points);
  c.received.add(points, payloadBytes);
  if (seq > u.lastSequenceNumber) u.lastSequenceNumber = seq;
  c.hub.relay(refOf(u), c.projectUuid, seq, groups);
  if (ahead) return new StoreTurn(c, u, seq, groups);
  storeNew(c, u, seq, groups);
}

/** A new alias is told to the client once recorded: an instance taking the stream over then knows it too. */
function announceRecorded(c: ServerConn, u: UpstreamStream, alias: number, d: { name: string; type: string }): void {
  c.hub.hooks.upstreamStates!.aliasAdded(u.id, { alias, name: d.name, type: d.type }).then(
    () => {
      u.announceAlias(alias);
      u.scheduleAck();
    },
    (e: unknown) =>
      c.hub.logger.warn({ err: String(e), streamId: u.id }, "iscp data-id alias not recorded: not announced"),
  );
}

export async function metadata(c: ServerConn, req: iscp2.IUpstreamMetadata): Promise<void> {
  const ack = (code: iscp2.ResultCode, str: string) =>
    c.sendMessage({ upstreamMetadataAck: { requestId: req.requestId ?? 0, resultCode: code, resultString: str } });
  const bt = req.baseTime;
  if (!bt) return ack(ResultCode.PROTOCOL_ERROR, "metadata kind not supported");
  if (!c.nodeId) return ack(ResultCode.NO_NODE_ID, "metadata needs a node id");
  const persist = req.extensionFields?.persist ?? false;
  if (c.hub.hooks.onUpstreamMetadata) {
    const info = { projectUuid: c.projectUuid, nodeId: c.nodeId, subject: c.subject, persist };
    const data = {
      sessionId: bt.sessionId ?? "",
      name: bt.name ?? "",
      priority: bt.priority ?? 0,
      elapsedTime: toBigInt(bt.elapsedTime),
      baseTime: toBigInt(bt.baseTime),
    };
    const r = await runHook(() => c.hub.hooks.onUpstreamMetadata!(info, data));
    if (r.code !== ResultCode.SUCCEEDED) return ack(r.code, r.str);
  }
  ack(ResultCode.SUCCEEDED, "OK");
  c.hub.publishMetadata(c.projectUuid, c.nodeId, { baseTime: bt });
}

function findOwn(c: ServerConn, streamId: Uint8Array | null | undefined): UpstreamStream | undefined {
  let id: string;
  try {
    id = bytesToUuid(streamId);
  } catch {
    return undefined;
  }
  const u = c.hub.upstreams.get(id);
  return u &&
    u.info.projectUuid === c.projectUuid &&
    u.info.subject.uuid === c.subject.uuid &&
    u.info.nodeId === c.nodeId
    ? u
    : undefined;
}

export async function close(c: ServerConn, req: iscp2.IUpstreamCloseRequest): Promise<void> {
  const u = findOwn(c, req.streamId);
  const reply = (code: iscp2.ResultCode, str: string) =>
    c.sendMessage({ upstreamCloseResponse: { requestId: req.requestId ?? 0, resultCode: code, resultString: str } });
  if (!u || u.owner !== c) return reply(ResultCode.STREAM_NOT_FOUND, "no such upstream on this connection");
  // Acks for chunks whose storage hook is still running go out before the close response.
  for (let i = 0; u.inFlight > 0 && i < 1000; i++) await new Promise((r) => setTimeout(r, 5));
  u.flushAck();
  c.upstreams.delete(u.alias);
  // Answered once the close is stored (the sequence's totals, the session's end): an agent that stops right
  // after the answer leaves the measurement ended in the cloud, not measuring.
  await c.hub.removeUpstream(u, {
    totalDataPoints: toBigInt(req.totalDataPoints),
    finalSequenceNumber: req.finalSequenceNumber ?? 0,
    closeSession: req.extensionFields?.closeSession ?? false,
    normal: true,
  });
  reply(ResultCode.SUCCEEDED, "OK");
}

export async function resume(c: ServerConn, req: iscp2.IUpstreamResumeRequest): Promise<void> {
  const reply = (alias: number, code: iscp2.ResultCode, str: string) =>
    c.sendMessage({
      upstreamResumeResponse: {
        requestId: req.requestId ?? 0,
        assignedStreamIdAlias: alias,
        resultCode: code,
        resultString: str,
      },
    });
  let u = findOwn(c, req.streamId);
  if (!u) {
    // Not held here: another instance held it (or this one before a restart).
    let taken: Awaited<ReturnType<typeof takeOver>>;
    try {
      taken = await takeOver(c, req.streamId);
    } catch (e) {
      c.hub.logger.warn({ err: String(e) }, "iscp upstream state not readable");
      return reply(0, ResultCode.PROCESS_FAILED, "the upstream's state could not be read");
    }
    if (taken === "attached")
      return reply(
        0,
        ResultCode.RESUME_REQUEST_CONFLICT,
        "upstream is attached to a live connection on another instance",
      );
    if (!c.isOpen) return;
    u = taken;
  }
  if (!u) return reply(0, ResultCode.STREAM_NOT_FOUND, "no such upstream (or it expired)");
  if (u.owner === c) return reply(u.alias, ResultCode.SUCCEEDED, "OK");
  if (u.owner) return reply(0, ResultCode.RESUME_REQUEST_CONFLICT, "upstream is attached to another live connection");
  if (c.upstreamSlotsUsed >= c.hub.limits.maxUpstreamsPerConn)
    return reply(0, ResultCode.TOO_MANY_STREAMS, "too many upstreams");
  clearTimeout(u.expiryTimer);
  // iscp-ts keeps using its old alias, so the old one is given back whenever it is free here.
  if (c.upstreams.has(u.alias) || u.alias === 0) u.alias = c.allocUpstreamAlias();
  u.owner = c;
  c.upstreams.set(u.alias, u);
  reply(u.alias, ResultCode.SUCCEEDED, "OK");
  u.scheduleAck();
  c.hub.publishMetadata(c.projectUuid, c.nodeId, {
    upstreamResume: { streamId: u.idBytes, sessionId: u.info.sessionId, qos: u.info.qos },
  });
}
