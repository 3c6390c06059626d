// Deferred upload lifecycle: idle while nothing is pending; with pending data it waits for a session,
// then runs the uploader (the data path) until it reports everything sent (LINK.CLOSED) or fails
// (LINK.FAILED, retried after RETRY_TICKS). Changing the priority restarts the uploader.
import { assign, setup, type SnapshotFrom } from "xstate";
import type { DeferredUploadSettings } from "../runtime/settings/schemas.js";
import { RETRY_TICKS, noTraffic, type Report, type Session, type Traffic } from "./vocabulary.js";
import { openerActor, type LinkEvent, type Opener } from "./link.js";
import {
  linkActions,
  linkGuards,
  onSession,
  retrying,
  sessionActions,
  sessionGuards,
  trafficStates,
} from "./link-states.js";

export interface UploaderParams {
  settings: DeferredUploadSettings;
  session: Session;
}
export interface DeferredInput {
  settings: DeferredUploadSettings;
  session?: Session;
  sessionReason?: string;
  /** Bytes waiting for deferred upload. */
  pending?: number;
}
export type DeferredEvent =
  | { type: "SETTINGS"; settings: DeferredUploadSettings }
  | { type: "SESSION"; session?: Session; reason: string }
  | { type: "PENDING"; bytes: number }
  | { type: "TICK" }
  | LinkEvent;

interface Context extends DeferredInput {
  pending: number;
  traffic: Traffic;
  retryIn: number;
  error: string;
}

/** Until the data path provides one: an uploader that has nothing to upload. */
const nothingToUpload: Opener<UploaderParams> = (_p, cb) => {
  queueMicrotask(() => cb.closed("nothing pending"));
  return { close() {} };
};

export const deferredUploadMachine = setup({
  types: { context: {} as Context, events: {} as DeferredEvent, input: {} as DeferredInput },
  actors: { uploader: openerActor(nothingToUpload) },
  guards: {
    pending: ({ context }) => context.pending > 0,
    hasSession: ({ context }) => context.session !== undefined,
    priorityChanged: ({ context, event }) =>
      event.type === "SETTINGS" && event.settings.priority !== context.settings.priority,
    ...sessionGuards,
    ...linkGuards,
  },
  actions: { ...linkActions<Context, DeferredEvent>(), ...sessionActions<Context, DeferredEvent>() },
}).createMachine({
  id: "deferred-upload",
  context: ({ input }) => ({ ...input, pending: input.pending ?? 0, traffic: noTraffic(), retryIn: 0, error: "" }),
  initial: "checking",
  on: {
    SETTINGS: [
      {
        guard: "priorityChanged",
        target: ".checking",
        reenter: true,
        actions: assign(({ event }) => ({ settings: event.settings })),
      },
      { actions: assign(({ event }) => ({ settings: event.settings })) },
    ],
    ...onSession,
    PENDING: { actions: assign(({ event }) => ({ pending: event.bytes })) },
  },
  states: {
    checking: {
      always: [{ guard: "pending", target: "waiting" }, { target: "idle" }],
    },
    idle: {
      entry: assign({ traffic: noTraffic(), error: "" }),
      on: { PENDING: { target: "checking", actions: assign(({ event }) => ({ pending: event.bytes })) } },
    },
    waiting: {
      always: { guard: "hasSession", target: "uploading" },
    },
    uploading: {
      invoke: {
        id: "uploader",
        src: "uploader",
        input: ({ context }) => ({ settings: context.settings, session: context.session! }),
      },
      initial: "quiet",
      on: {
        DATA: { target: ".active", actions: "count" },
        "LINK.CLOSED": { target: "idle", actions: assign({ pending: 0 }) },
        "LINK.FAILED": {
          target: "failed",
          actions: assign(({ event }) => ({ error: event.reason, retryIn: RETRY_TICKS })),
        },
      },
      states: trafficStates,
    },
    failed: retrying("checking"),
  },
});
export type DeferredSnapshot = SnapshotFrom<typeof deferredUploadMachine>;
export type UploaderOpener = Opener<UploaderParams>;

/**
 * Code mapping: nothing pending → none; pending without a session → disconnected (reason in error);
 * uploading → connected while bytes flow, quiet otherwise; failed → error until the retry.
 */
export function reportDeferred(s: DeferredSnapshot): Report {
  const c = s.context;
  if (s.matches("waiting"))
    return { code: "disconnected", error: c.sessionReason ?? "waiting for the connection", bitrate: 0 };
  if (s.matches({ uploading: "active" })) return { code: "connected", error: "", bitrate: c.traffic.bitrate };
  if (s.matches({ uploading: "quiet" })) return { code: "quiet", error: "", bitrate: c.traffic.bitrate };
  if (s.matches("failed")) return { code: "error", error: c.error, bitrate: 0 };
  return { code: "none", error: "", bitrate: 0 };
}
