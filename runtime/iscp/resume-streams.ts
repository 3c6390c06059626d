// After a reconnect, every open stream is resumed on the new transport (iSCP v2 UpstreamResumeRequest,
// DownstreamResumeRequest); a stream the broker no longer knows is closed locally with the broker's reason.
import type { Message } from "../../proto/wire/message.js";
import type { ClientDownstream } from "./downstream.js";
import type { ResponseKind } from "./pending-requests.js";
import type { ClientUpstream } from "./upstream.js";

type Request = (build: (requestId: number) => Message, kind: ResponseKind) => Promise<Record<string, unknown>>;

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

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
      const r = await request(
        (requestId) => ({ upstreamResumeRequest: { requestId, streamId: u.streamIdBytes } }),
        "upstreamResumeResponse",
      );
      u.resumed((r.assignedStreamIdAlias as number | undefined) || u.alias);
      upstreams.set(u.alias, u);
    } catch (e) {
      u.lost(asError(e));
    }
  }
  for (const d of [...downstreams.values()]) {
    try {
      await request(
        (requestId) => ({
          downstreamResumeRequest: { requestId, streamId: d.streamIdBytes, desiredStreamIdAlias: d.alias },
        }),
        "downstreamResumeResponse",
      );
    } catch (e) {
      downstreams.delete(d.alias);
      d.lost(asError(e));
    }
  }
}
