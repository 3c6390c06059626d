// The broker's storage hooks (cloud/iscp/broker/options.ts IscpHooks) backed by svc.measurements.
// cloud/iscp/module.ts wires them: `new IscpBroker({ ...measurementHooks(svc.measurements), ... })`.
import { ResultCode } from "../../../proto/wire/message.js";
import { isStorageFull } from "../../database/db.js";
import type { IscpHooks } from "../../iscp/broker/options.js";
import { isUuid } from "../formats/codec.js";
import type { MeasurementsService } from "../service/measurements-service.js";
import { NodeMismatch, NodeNotUuid, SessionRefused } from "./upstream-store.js";

const refusal = (e: unknown) => {
  if (e instanceof SessionRefused) return { resultCode: ResultCode.SESSION_NOT_FOUND, resultString: e.message };
  if (e instanceof NodeMismatch) return { resultCode: ResultCode.NODE_ID_MISMATCH, resultString: e.message };
  if (e instanceof NodeNotUuid) return { resultCode: ResultCode.NO_NODE_ID, resultString: e.message };
  // Not stored: the agent keeps the chunk (and its deferred upload retries later).
  if (isStorageFull(e)) return { resultCode: ResultCode.PROCESS_FAILED, resultString: "the server's storage is full" };
  throw e;
};

/** `onFull`: told when a write failed for lack of space (the readiness probe reports it). */
export function measurementHooks(
  m: MeasurementsService,
  onFull?: () => void,
): Required<
  Pick<
    IscpHooks,
    "onUpstreamOpen" | "onUpstreamChunk" | "onUpstreamMetadata" | "onUpstreamClose" | "storedSequenceNumbers"
  >
> {
  const refused = (e: unknown) => {
    if (isStorageFull(e)) {
      m.storageFull.refused();
      onFull?.();
    }
    return refusal(e);
  };
  const stored = (r: unknown) => {
    if (r !== "not_persisted") m.storageFull.stored();
  };
  return {
    onUpstreamOpen: async (info) => {
      if (!info.persist) return;
      if (!isUuid(info.sessionId))
        return {
          resultCode: ResultCode.SESSION_NOT_FOUND,
          resultString: "a persisted upstream needs a measurement UUID as session id",
        };
      // The node becomes the measurement's edge_uuid, so it has to be a UUID (an edge's own, for edges).
      if (!isUuid(info.nodeId))
        return {
          resultCode: ResultCode.NO_NODE_ID,
          resultString: "a persisted upstream needs an edge UUID as node id",
        };
      try {
        await m.upstream.checkSession(info);
      } catch (e) {
        return refused(e);
      }
    },
    // Runs for every chunk: one reaction to the store's promise, no async function's own promise and await.
    onUpstreamChunk: (info, chunk) => m.storeUpstreamChunk(info, chunk).then(stored, refused),
    onUpstreamMetadata: async (info, bt) => {
      try {
        await m.storeBaseTime(info, bt);
      } catch (e) {
        return refused(e);
      }
    },
    onUpstreamClose: (info, close) => m.closeUpstream(info, close),
    storedSequenceNumbers: (info, limit) => m.upstream.storedSequenceNumbers(info, limit),
  };
}
