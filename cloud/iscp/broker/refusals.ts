// The response that carries a refusal for each kind of client request. Failure responses still
// carry a valid (nil) UUID in stream-id fields because iscp-ts validates every one it decodes.
import { iscp2 } from "../../../proto/wire/message.js";
import type { ScannedUpstreamChunk } from "../../../proto/wire/chunk-scan.js";

export const NIL_UUID_BYTES = new Uint8Array(16);

/** The messages a client may send; any other kind from a client is a protocol error. */
export const CLIENT_ONLY = new Set([
  "upstreamOpenRequest",
  "upstreamResumeRequest",
  "upstreamCloseRequest",
  "upstreamChunk",
  "upstreamMetadata",
  "downstreamOpenRequest",
  "downstreamResumeRequest",
  "downstreamCloseRequest",
  "downstreamChunkAck",
  "downstreamMetadataAck",
  "upstreamCall",
  "ping",
  "pong",
  "disconnect",
]);

/** The message that answers `body` (of kind `kind`) with `resultCode`, or undefined for kinds without an answer. */
export function refusalFor(
  kind: string,
  body: Record<string, unknown>,
  resultCode: iscp2.ResultCode,
  resultString: string,
): iscp2.IMessage | undefined {
  const requestId = (body.requestId as number | undefined) ?? 0;
  const r = { requestId, resultCode, resultString };
  switch (kind) {
    case "upstreamOpenRequest":
      return { upstreamOpenResponse: { ...r, assignedStreamId: NIL_UUID_BYTES } };
    case "upstreamResumeRequest":
      return { upstreamResumeResponse: r };
    case "upstreamCloseRequest":
      return { upstreamCloseResponse: r };
    case "upstreamMetadata":
      return { upstreamMetadataAck: r };
    case "downstreamOpenRequest":
      return { downstreamOpenResponse: { ...r, assignedStreamId: NIL_UUID_BYTES } };
    case "downstreamResumeRequest":
      return { downstreamResumeResponse: r };
    case "downstreamCloseRequest":
      return { downstreamCloseResponse: r };
    case "upstreamCall":
      return { upstreamCallAck: { callId: (body.callId as string | undefined) ?? "", resultCode, resultString } };
    case "upstreamChunk": {
      const c = body as iscp2.IUpstreamChunk;
      return {
        upstreamChunkAck: {
          streamIdAlias: c.streamIdAlias ?? 0,
          results: [{ sequenceNumber: c.streamChunk?.sequenceNumber ?? 0, resultCode, resultString }],
        },
      };
    }
    case "downstreamChunkAck": {
      const a = body as iscp2.IDownstreamChunkAck;
      return {
        downstreamChunkAckComplete: {
          streamIdAlias: a.streamIdAlias ?? 0,
          ackId: a.ackId ?? 0,
          resultCode,
          resultString,
        },
      };
    }
    default:
      return undefined;
  }
}

/** What a refusal needs of an upstream chunk, in the decoded message's shape (made only for a refusal). */
export const chunkBody = (chunk: ScannedUpstreamChunk) => ({
  streamIdAlias: chunk.streamIdAlias,
  streamChunk: { sequenceNumber: chunk.sequenceNumber },
});
