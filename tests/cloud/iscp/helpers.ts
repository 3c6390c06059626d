// Shared by the broker's store tests: a raw client's persisted, reliable upstream that sends numbered 1 KiB chunks,
// and the chunks the broker acked as stored.
import { QoS, ResultCode } from "../../../proto/wire/message.js";
import type { Raw } from "../../support/iscp-raw-peer.js";

export const SESSION = "0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f";

/** Opens the upstream (request id 2) and returns `send(from, to)`: chunks with those sequence numbers, in order. */
export async function persistedUpstream(r: Raw): Promise<(from: number, to: number) => void> {
  r.send({
    upstreamOpenRequest: {
      requestId: 2,
      sessionId: SESSION,
      qos: QoS.RELIABLE,
      ackInterval: 0,
      extensionFields: { persist: true },
    },
  });
  const alias = (await r.next("upstreamOpenResponse")).upstreamOpenResponse!.assignedStreamIdAlias!;
  return (from, to) => sendChunks(r, alias, from, to);
}

/** Chunks of one 1 KiB point with sequence numbers `from` to `to`, in order, on the upstream of `alias`. */
export function sendChunks(r: Raw, alias: number, from: number, to: number): void {
  const payload = new Uint8Array(1024);
  for (let seq = from; seq <= to; seq++)
    r.send({
      upstreamChunk: {
        streamIdAlias: alias,
        streamChunk: {
          sequenceNumber: seq,
          dataPointGroups: [{ dataId: { name: "n", type: "t" }, dataPoints: [{ elapsedTime: seq, payload }] }],
        },
      },
    });
}

/** Sequence numbers of the chunks acked with SUCCEEDED so far. */
export const ackedChunks = (r: Raw): number[] =>
  r.msgs
    .flatMap((m) => m.upstreamChunkAck?.results ?? [])
    .filter((x) => (x.resultCode ?? 0) === ResultCode.SUCCEEDED)
    .map((x) => x.sequenceNumber ?? 0);
