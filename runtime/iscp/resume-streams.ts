// After a reconnect, every open stream is resumed on the new transport (iSCP v2 UpstreamResumeRequest,
// DownstreamResumeRequest); a stream the broker no longer knows is closed locally with the broker's reason.
import { ResultCode, type Message } from "../../proto/wire/message.js";
import type { ClientDownstream } from "./downstream.js";
import type { ResponseKind } from "./pending-requests.js";
import { IscpRequestError } from "./request-error.js";
import type { ClientUpstream } from "./upstream.js";

type Request = (build: (requestId: number) => Message, kind: ResponseKind) => Promise<Record<string, unknown>>;

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/** Pause between resumes of a stream the broker still counts as attached. */
const CONFLICT_RETRY_MS = 500;

/**
 * A resume answered RESUME_REQUEST_CONFLICT: the broker still counts the stream as attached to the connection
 * this client lost (a cut it has not noticed: it finds out at its next unanswered Ping). Tried again for as
 * long as the broker keeps a stream after its connection goes (the stream's expiry interval); a new stream
 * would split the measurement in two.
 */
async function resume(
  request: Request,
  build: (requestId: number) => Message,
  kind: ResponseKind,
  expirySec: number,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + expirySec * 1000;
  for (;;) {
    try {
      return await request(build, kind);
    } catch (e) {
      const conflict = e instanceof IscpRequestError && e.resultCode === ResultCode.RESUME_REQUEST_CONFLICT;
      if (!conflict || Date.now() + CONFLICT_RETRY_MS > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, CONFLICT_RETRY_MS));
  }
}

/** Resumes the streams one after another; an upstream may come back under a new alias, so its map is rebuilt. */
export async function resumeStreams(
  request: Request,
  upstreams: Map<number, ClientUpstream>,
  downstreams: Map<number, ClientDownstream>,
): Promise<void> {
  const ups = [...upstreams.values()];
  upstreams.clear();
  for (const u of ups) {
    try {
      const r = await resume(
        request,
        (requestId) => ({ upstreamResumeRequest: { requestId, streamId: u.streamIdBytes } }),
        "upstreamResumeResponse",
        u.expiryIntervalSec,
      );
      u.resumed((r.assignedStreamIdAlias as number | undefined) || u.alias);
      upstreams.set(u.alias, u);
    } catch (e) {
      u.lost(asError(e));
    }
  }
  for (const d of [...downstreams.values()]) {
    try {
      await resume(
        request,
        (requestId) => ({
          downstreamResumeRequest: { requestId, streamId: d.streamIdBytes, desiredStreamIdAlias: d.alias },
        }),
        "downstreamResumeResponse",
        d.expiryIntervalSec,
      );
    } catch (e) {
      downstreams.delete(d.alias);
      d.lost(asError(e));
    }
  }
}
