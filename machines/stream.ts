// Upstream and downstream lifecycles (same shape, different link): an enabled stream waits for a
// session from the connection machine, opens an iSCP stream through the injected link, reports
// quiet/connected by traffic, and retries after failures. Settings that change how the stream is
// opened reconnect it; `enabled: false` closes it.
import { assign, setup, type SnapshotFrom } from "xstate";
import type { DownstreamSettings, UpstreamSettings } from "../runtime/settings/schemas.js";
import { backoffTicks, noTraffic, type Report, type Session, type Traffic } from "./vocabulary.js";
import { openerActor, unavailable, type LinkEvent, type Opener } from "./link.js";
import {
  linkActions,
  linkGuards,
  onSession,
  retrying,
  sessionActions,
  sessionGuards,
  trafficStates,
} from "./link-states.js";

export type Direction = "upstream" | "downstream";
export interface StreamLinkParams<S> {
  direction: Direction;
  settings: S;
  session: Session;
}
export interface StreamInput<S> {
  settings: S;
  session?: Session;
  /** Why there is no session (shown while waiting). */
  sessionReason?: string;
}
export type StreamEvent<S> =
  | { type: "SETTINGS"; settings: S }
  | { type: "SESSION"; session?: Session; reason: string }
  | { type: "TICK" }
  | LinkEvent;

interface Context<S> extends StreamInput<S> {
  traffic: Traffic;
  retryIn: number;
  error: string;
  /** The last failure was an open stream being lost (disconnected), not a failure to open (error). */
  lost: boolean;
  /** Consecutive failures since the stream was last open: the backoff's exponent. */
  failures: number;
}

/** Fields that do not change how the stream is opened (routing is the data path's business). */
const linkKey = (s: { enabled: boolean; dest_ids?: readonly string[] }) => {
  const { enabled: _e, dest_ids: _d, ...rest } = s as Record<string, unknown>;
  return JSON.stringify(rest);
};

/** The next retry: exponential backoff with jitter keyed by edge and stream (machines/vocabulary.ts). */
const backoff = <S extends UpstreamSettings | DownstreamSettings>(c: Context<S>) => {
  const failures = Math.min(c.failures + 1, 16);
  return { failures, retryIn: backoffTicks(failures, `${c.session?.connection.edge_uuid ?? ""}/${c.settings.id}`) };
};

function createStreamMachine<S extends UpstreamSettings | DownstreamSettings>(direction: Direction) {
  return setup({
    types: { context: {} as Context<S>, events: {} as StreamEvent<S>, input: {} as StreamInput<S> },
    actors: { link: openerActor(unavailable<StreamLinkParams<S>>("the iSCP client is not available")) },
    guards: {
      enabled: ({ context }) => context.settings.enabled,
      hasSession: ({ context }) => context.session !== undefined,
      disabling: ({ event }) => event.type === "SETTINGS" && !event.settings.enabled,
      relink: ({ context, event }) =>
        event.type === "SETTINGS" &&
        (!context.settings.enabled || linkKey(event.settings) !== linkKey(context.settings)),
      ...sessionGuards,
      ...linkGuards,
    },
    actions: { ...linkActions<Context<S>, StreamEvent<S>>(), ...sessionActions<Context<S>, StreamEvent<S>>() },
  }).createMachine({
    id: direction,
    context: ({ input }) => ({ ...input, traffic: noTraffic(), retryIn: 0, error: "", lost: false, failures: 0 }),
    initial: "checking",
    on: {
      SETTINGS: [
        { guard: "disabling", target: ".disabled", actions: assign(({ event }) => ({ settings: event.settings })) },
        {
          guard: "relink",
          target: ".checking",
          reenter: true,
          actions: assign(({ event }) => ({ settings: event.settings })),
        },
        { actions: assign(({ event }) => ({ settings: event.settings })) },
      ],
      // A refreshed token keeps the open stream; the next connect uses it.
      ...onSession,
    },
    states: {
      checking: {
        always: [{ guard: "enabled", target: "enabled" }, { target: "disabled" }],
      },
      disabled: {
        entry: assign({ traffic: noTraffic(), error: "" }),
      },
      enabled: {
        initial: "deciding",
        states: {
          deciding: {
            always: [{ guard: "hasSession", target: "linked" }, { target: "waiting" }],
          },
          waiting: {},
          linked: {
            invoke: {
              id: "link",
              src: "link",
              input: ({ context }) => ({ direction, settings: context.settings, session: context.session! }),
            },
            initial: "connecting",
            entry: assign({ traffic: noTraffic(), error: "" }),
            states: {
              connecting: {
                on: { "LINK.OPENED": { target: "open", actions: assign({ failures: 0 }) } },
              },
              // The connection dropped and the client is reconnecting and resuming the stream by itself.
              reconnecting: {
                entry: assign({ traffic: noTraffic() }),
                on: { "LINK.OPENED": { target: "open", actions: assign({ error: "" }) } },
              },
              open: {
                initial: "quiet",
                on: {
                  DATA: { target: ".active", actions: "count" },
                  "LINK.INTERRUPTED": {
                    target: "reconnecting",
                    actions: assign(({ event }) => ({ error: `reconnecting: ${event.reason}` })),
                  },
                },
                states: trafficStates,
              },
            },
            on: {
              "LINK.FAILED": {
                target: "retrying",
                actions: assign(({ context, event }) => ({ error: event.reason, ...backoff(context), lost: false })),
              },
              "LINK.CLOSED": {
                target: "retrying",
                actions: assign(({ context, event }) => ({ error: event.reason, ...backoff(context), lost: true })),
              },
            },
          },
          retrying: retrying("deciding"),
        },
      },
    },
  });
}

export const upstreamMachine = createStreamMachine<UpstreamSettings>("upstream");
export const downstreamMachine = createStreamMachine<DownstreamSettings>("downstream");
export type UpstreamMachine = typeof upstreamMachine;
export type DownstreamMachine = typeof downstreamMachine;
export type StreamSnapshot = SnapshotFrom<UpstreamMachine> | SnapshotFrom<DownstreamMachine>;
export type StreamOpener<S> = Opener<StreamLinkParams<S>>;

/**
 * Code mapping: disabled → none; waiting for a session, connecting or reconnecting → disconnected (with the reason);
 * open without data for QUIET_AFTER_TICKS → quiet; open with data → connected; failed/lost, until the
 * retry → error (after a failure to open) or disconnected (after an open stream was lost).
 */
export function reportStream(s: StreamSnapshot): Report {
  const c = s.context;
  if (s.matches("disabled") || s.matches("checking")) return { code: "none", error: "", bitrate: 0 };
  if (s.matches({ enabled: "waiting" }))
    return { code: "disconnected", error: c.sessionReason ?? "waiting for the connection", bitrate: 0 };
  if (s.matches({ enabled: { linked: "connecting" } }) || s.matches({ enabled: "deciding" }))
    return { code: "disconnected", error: "", bitrate: 0 };
  if (s.matches({ enabled: { linked: "reconnecting" } })) return { code: "disconnected", error: c.error, bitrate: 0 };
  if (s.matches({ enabled: { linked: { open: "active" } } }))
    return { code: "connected", error: "", bitrate: c.traffic.bitrate };
  if (s.matches({ enabled: { linked: { open: "quiet" } } }))
    return { code: "quiet", error: "", bitrate: c.traffic.bitrate };
  return { code: c.lost ? "disconnected" : "error", error: c.error, bitrate: 0 };
}
