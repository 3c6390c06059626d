// A chunk read while storage is behind on its connection, received ahead of its turn (intake.ts): relayed at
// once, stored in its turn.
import { ResultCode } from "../../../proto/wire/message.js";
import type { ServerConn } from "./conn.js";
import type { HeldMessage, HeldTurn } from "./intake.js";
import { refusalFor } from "./refusals.js";
import { chunkAhead, chunkIn } from "./upstream-handlers.js";

/** The turn a held chunk leaves once received; undefined for any other message, or a subject that may not send chunks. */
export function receiveAhead(c: ServerConn, m: HeldMessage, allowed: Set<string> | undefined): HeldTurn | undefined {
  const chunk = m.chunk ?? (m.msg?.message === "upstreamChunk" ? chunkIn(m.msg.upstreamChunk!) : undefined);
  if (chunk === undefined || (allowed !== undefined && !allowed.has("upstreamChunk"))) return undefined;
  try {
    return chunkAhead(c, chunk);
  } catch (e) {
    c.hub.logger.warn({ remote: c.remote, kind: "upstreamChunk", err: String(e) }, "iscp request failed");
    const body = { streamIdAlias: chunk.streamIdAlias, streamChunk: { sequenceNumber: chunk.sequenceNumber } };
    const refusal = refusalFor("upstreamChunk", body, ResultCode.PROCESS_FAILED, "internal error")!;
    return { run: () => c.sendMessage(refusal), drop: () => undefined };
  }
}
