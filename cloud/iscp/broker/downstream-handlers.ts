// Downstream requests on a broker connection (open, ack, resume, close) and E2E calls.
import { iscp2, QoS, ResultCode } from "../../../proto/wire/message.js";
import { nowNanos } from "../../../proto/wire/long.js";
import { bytesToUuid, newUuid } from "../../../proto/wire/uuid.js";
import type { ServerConn } from "./conn.js";
import { DownstreamStream, type DownstreamFilterSpec } from "./downstream.js";
import { compilePattern, DataIdMatcher, type CompiledDataFilter } from "./filter.js";
import { refusalFor } from "./refusals.js";
import { dataIdKey } from "./upstream.js";

type Refusal = { code: iscp2.ResultCode; why: string };

function compileFilters(c: ServerConn, filters: iscp2.IDownstreamFilter[]): DownstreamFilterSpec[] | Refusal {
  const L = c.hub.limits;
  if (filters.length === 0) return { code: ResultCode.INVALID_DATA_FILTER, why: "no downstream filter" };
  if (filters.length > L.maxDownstreamFilters)
    return {
      code: ResultCode.TOO_MANY_DOWNSTREAM_FILTERS,
      why: `at most ${L.maxDownstreamFilters} downstream filters`,
    };
  const out: DownstreamFilterSpec[] = [];
  for (const f of filters) {
    const dfs = f.dataFilters ?? [];
    if (!f.sourceNodeId) return { code: ResultCode.INVALID_DATA_FILTER, why: "filter without source_node_id" };
    if (dfs.length === 0) return { code: ResultCode.INVALID_DATA_FILTER, why: "filter without data filters" };
    if (dfs.length > L.maxDataFiltersPerFilter)
      return { code: ResultCode.TOO_MANY_DATA_FILTERS, why: `at most ${L.maxDataFiltersPerFilter} data filters` };
    const compiled: CompiledDataFilter[] = [];
    for (const d of dfs) {
      const name = compilePattern(d.name ?? "");
      const type = compilePattern(d.type ?? "");
      if (!name || !type)
        return { code: ResultCode.INVALID_DATA_FILTER, why: `bad data filter ${d.name ?? ""}:${d.type ?? ""}` };
      compiled.push({ name, type });
    }
    out.push({ sourceNodeId: f.sourceNodeId, matcher: new DataIdMatcher(compiled) });
  }
  return out;
}

export function open(c: ServerConn, req: iscp2.IDownstreamOpenRequest): void {
  const L = c.hub.limits;
  const refuse = (code: iscp2.ResultCode, why: string) =>
    c.sendMessage(refusalFor("downstreamOpenRequest", req as Record<string, unknown>, code, why)!);
  const alias = req.desiredStreamIdAlias ?? 0;
  const qos = req.qos ?? QoS.UNRELIABLE;
  const declared = Object.entries(req.dataIdAliases ?? {});
  if (alias === 0 || c.downstreams.has(alias))
    return refuse(ResultCode.PROTOCOL_ERROR, `stream alias ${alias} is zero or in use`);
  if (c.downstreams.size >= L.maxDownstreamsPerConn)
    return refuse(ResultCode.TOO_MANY_STREAMS, `at most ${L.maxDownstreamsPerConn} downstreams`);
  if (qos !== QoS.UNRELIABLE && qos !== QoS.RELIABLE && qos !== QoS.PARTIAL)
    return refuse(ResultCode.DESIRED_QOS_NOT_SUPPORTED, `qos ${qos}`);
  if ((req.expiryInterval ?? 0) > L.maxExpiryIntervalSec)
    return refuse(ResultCode.TOO_LONG_EXPIRY_INTERVAL, `expiry_interval above ${L.maxExpiryIntervalSec} s`);
  if (declared.length > L.maxDataIdAliases)
    return refuse(ResultCode.TOO_MANY_DATA_ID_ALIASES, `at most ${L.maxDataIdAliases} data id aliases`);
  for (const [a, d] of declared) {
    if (Number(a) === 0) return refuse(ResultCode.INVALID_DATA_ID_ALIAS, "data id alias 0");
    if (!d.name || !d.type) return refuse(ResultCode.INVALID_DATA_ID, "data id needs name and type");
  }
  const filters = compileFilters(c, req.downstreamFilters ?? []);
  if (!Array.isArray(filters)) return refuse(filters.code, filters.why);
  const { uuid, bytes } = newUuid();
  const ds = new DownstreamStream(
    uuid,
    bytes,
    alias,
    c.projectUuid,
    c.subject.uuid,
    filters,
    qos,
    req.omitEmptyChunk ?? false,
    c.hub.expiryMs(req.expiryInterval ?? 0),
    {
      queueBytes: L.downstreamQueueBytes,
      queueChunks: L.downstreamQueueChunks,
      unacked: L.reliableUnackedChunks,
      maxFrame: L.maxOutgoingFrameBytes,
      maxAliases: L.maxDataIdAliases,
    },
  );
  for (const [a, d] of declared) ds.dataIdAliases.set(dataIdKey(d.name!, d.type!), Number(a));
  c.sendMessage({
    downstreamOpenResponse: {
      requestId: req.requestId ?? 0,
      assignedStreamId: bytes,
      serverTime: nowNanos(),
      resultCode: ResultCode.SUCCEEDED,
      resultString: "OK",
    },
  });
  ds.owner = c;
  c.downstreams.set(alias, ds);
  c.hub.addDownstream(ds);
  c.hub.replayBaseTimes(ds);
}

export function chunkAck(c: ServerConn, ack: iscp2.IDownstreamChunkAck): void {
  const ds = c.downstreams.get(ack.streamIdAlias ?? 0);
  if (!ds) {
    c.sendMessage(
      refusalFor(
        "downstreamChunkAck",
        ack as Record<string, unknown>,
        ResultCode.STREAM_NOT_FOUND,
        "unknown stream alias",
      )!,
    );
    return;
  }
  const [code, str] = ds.applyAck(ack)
    ? [ResultCode.SUCCEEDED, "OK"]
    : [
        ResultCode.TOO_MANY_DATA_ID_ALIASES,
        `at most ${c.hub.limits.maxDataIdAliases} aliases per table; the rest were ignored`,
      ];
  c.sendMessage({
    downstreamChunkAckComplete: { streamIdAlias: ds.alias, ackId: ack.ackId ?? 0, resultCode: code, resultString: str },
  });
}

function findOwn(c: ServerConn, streamId: Uint8Array | null | undefined): DownstreamStream | undefined {
  let id: string;
  try {
    id = bytesToUuid(streamId);
  } catch {
    return undefined;
  }
  const ds = c.hub.downstreams.get(id);
  return ds && ds.projectUuid === c.projectUuid && ds.subjectUuid === c.subject.uuid ? ds : undefined;
}

export function resume(c: ServerConn, req: iscp2.IDownstreamResumeRequest): void {
  const reply = (code: iscp2.ResultCode, str: string) =>
    c.sendMessage({ downstreamResumeResponse: { requestId: req.requestId ?? 0, resultCode: code, resultString: str } });
  const ds = findOwn(c, req.streamId);
  if (!ds) return reply(ResultCode.STREAM_NOT_FOUND, "no such downstream (or it expired)");
  if (ds.owner === c) return reply(ResultCode.SUCCEEDED, "OK");
  if (ds.owner) return reply(ResultCode.RESUME_REQUEST_CONFLICT, "downstream is attached to another live connection");
  const alias = req.desiredStreamIdAlias || ds.alias;
  if (c.downstreams.has(alias)) return reply(ResultCode.PROTOCOL_ERROR, `stream alias ${alias} in use`);
  if (c.downstreams.size >= c.hub.limits.maxDownstreamsPerConn)
    return reply(ResultCode.TOO_MANY_STREAMS, "too many downstreams");
  clearTimeout(ds.expiryTimer);
  ds.alias = alias;
  reply(ResultCode.SUCCEEDED, "OK");
  ds.owner = c;
  c.downstreams.set(alias, ds);
  if (ds.qos === QoS.RELIABLE) ds.requeueUnacked();
  ds.flushPendingMetadata();
  c.wake();
}

export function close(c: ServerConn, req: iscp2.IDownstreamCloseRequest): void {
  const ds = findOwn(c, req.streamId);
  const reply = (code: iscp2.ResultCode, str: string) =>
    c.sendMessage({ downstreamCloseResponse: { requestId: req.requestId ?? 0, resultCode: code, resultString: str } });
  if (!ds || ds.owner !== c) return reply(ResultCode.STREAM_NOT_FOUND, "no such downstream on this connection");
  c.downstreams.delete(ds.alias);
  c.hub.removeDownstream(ds);
  reply(ResultCode.SUCCEEDED, "OK");
}

/** UpstreamCall: always acked (iscp-ts waits without a timeout), relayed with call_id unchanged. */
export async function call(c: ServerConn, req: iscp2.IUpstreamCall): Promise<void> {
  const callId = req.callId ?? "";
  const ack = (code: iscp2.ResultCode, str: string) =>
    c.sendMessage({ upstreamCallAck: { callId, resultCode: code, resultString: str } });
  if (!callId) return ack(ResultCode.PROTOCOL_ERROR, "call_id is empty");
  const out = {
    callId,
    requestCallId: req.requestCallId ?? "",
    sourceNodeId: c.nodeId,
    name: req.name ?? "",
    type: req.type ?? "",
    payload: req.payload ?? new Uint8Array(0),
  };
  let { found, delivered } = c.hub.deliverCall(c.projectUuid, req.destinationNodeId ?? "", out);
  // Not connected here: maybe to another instance of the cloud.
  if (found === 0 && c.hub.remote)
    ({ found, delivered } = await c.hub.remote.call(c.projectUuid, req.destinationNodeId ?? "", out));
  if (found === 0) return ack(ResultCode.PROCESS_FAILED, "destination node is not connected");
  if (delivered === 0)
    return ack(ResultCode.TOO_LARGE_MESSAGE_SIZE, "the call does not fit in the destination's frames");
  ack(ResultCode.SUCCEEDED, "OK");
}
