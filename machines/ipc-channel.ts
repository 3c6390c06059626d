// Device-connector IPC channel lifecycle (one machine per direction): an enabled channel runs its
// driver (the data path: create the FIFO, launch the connector, read or write frames), waits for the
// peer, reports quiet/connected by traffic, and retries after failures. Changing the FIFO, format,
// prefix or launch restarts the driver; dest_ids changes are routing only and keep it running.
import { assign, setup, type SnapshotFrom } from "xstate";
import type { DownstreamIpcSettings, UpstreamIpcSettings } from "../runtime/settings/schemas.js";
import { RETRY_TICKS, noTraffic, type Report, type Traffic } from "./vocabulary.js";
import { openerActor, unavailable, type LinkEvent, type Opener } from "./link.js";
import { linkActions, linkGuards, retrying, trafficStates } from "./link-states.js";
import type { Direction } from "./stream.js";

export interface ChannelParams<S> {
  direction: Direction;
  settings: S;
}
export interface ChannelInput<S> {
  settings: S;
}
export type ChannelEvent<S> = { type: "SETTINGS"; settings: S } | { type: "TICK" } | LinkEvent;

interface Context<S> extends ChannelInput<S> {
  traffic: Traffic;
  retryIn: number;
  error: string;
  /** What the running driver reports going wrong (counts of skipped or dropped data); severe: refusing now. */
  problem: { text: string; severe: boolean };
}
const noProblem = { text: "", severe: false };

const driverKey = (s: { enabled: boolean; dest_ids?: readonly string[] }) => {
  const { enabled: _e, dest_ids: _d, ...rest } = s as Record<string, unknown>;
  return JSON.stringify(rest);
};

function createChannelMachine<S extends UpstreamIpcSettings | DownstreamIpcSettings>(direction: Direction) {
  return setup({
    types: { context: {} as Context<S>, events: {} as ChannelEvent<S>, input: {} as ChannelInput<S> },
    actors: { channel: openerActor(unavailable<ChannelParams<S>>("the device-connector data path is not available")) },
    guards: {
      enabled: ({ context }) => context.settings.enabled,
      disabling: ({ event }) => event.type === "SETTINGS" && !event.settings.enabled,
      restart: ({ context, event }) =>
        event.type === "SETTINGS" &&
        (!context.settings.enabled || driverKey(event.settings) !== driverKey(context.settings)),
      permanent: ({ event }) => event.type === "LINK.FAILED" && event.permanent === true,
      ...linkGuards,
    },
    actions: linkActions<Context<S>, ChannelEvent<S>>(),
  }).createMachine({
    id: `${direction}-ipc`,
    context: ({ input }) => ({ ...input, traffic: noTraffic(), retryIn: 0, error: "", problem: noProblem }),
    initial: "checking",
    on: {
      SETTINGS: [
        { guard: "disabling", target: ".disabled", actions: assign(({ event }) => ({ settings: event.settings })) },
        {
          guard: "restart",
          target: ".checking",
          reenter: true,
          actions: assign(({ event }) => ({ settings: event.settings })),
        },
        { actions: assign(({ event }) => ({ settings: event.settings })) },
      ],
    },
    states: {
      checking: {
        always: [{ guard: "enabled", target: "running" }, { target: "disabled" }],
      },
      disabled: { entry: assign({ traffic: noTraffic(), error: "" }) },
      running: {
        invoke: { id: "channel", src: "channel", input: ({ context }) => ({ direction, settings: context.settings }) },
        entry: assign({ traffic: noTraffic(), error: "", problem: noProblem }),
        initial: "waiting",
        states: {
          // The FIFO exists; the connector has not opened its end yet (or went away).
          waiting: { on: { "LINK.OPENED": "open" } },
          open: {
            initial: "quiet",
            on: {
              DATA: { target: ".active", actions: "count" },
              "LINK.CLOSED": {
                target: "waiting",
                actions: assign(({ event }) => ({ error: event.reason, traffic: noTraffic() })),
              },
            },
            entry: assign({ error: "" }),
            states: trafficStates,
          },
        },
        on: {
          "LINK.PROBLEM": {
            actions: assign(({ event }) => ({ problem: { text: event.text, severe: event.severe === true } })),
          },
          "LINK.FAILED": [
            { guard: "permanent", target: "stopped", actions: assign(({ event }) => ({ error: event.reason })) },
            { target: "retrying", actions: assign(({ event }) => ({ error: event.reason, retryIn: RETRY_TICKS })) },
          ],
        },
      },
      // Given up (e.g. the connector's restart policy ended); only a settings change starts it again.
      stopped: { entry: assign({ traffic: noTraffic() }) },
      retrying: retrying("checking"),
    },
  });
}

export const upstreamIpcMachine = createChannelMachine<UpstreamIpcSettings>("upstream");
export const downstreamIpcMachine = createChannelMachine<DownstreamIpcSettings>("downstream");
export type ChannelSnapshot = SnapshotFrom<typeof upstreamIpcMachine> | SnapshotFrom<typeof downstreamIpcMachine>;
export type ChannelOpener<S> = Opener<ChannelParams<S>>;

/**
 * Code mapping: disabled → none; running without the connector on the other end → disconnected
 * (error says why, if it left); open without data → quiet; open with data → connected, with `error`
 * counting what was skipped or dropped; open while points are refused (e.g. disk full) → error; failed
 * (retried) or stopped (given up until the settings change) → error.
 */
export function reportChannel(s: ChannelSnapshot): Report {
  const c = s.context;
  if (s.matches("disabled") || s.matches("checking")) return { code: "none", error: "", bitrate: 0 };
  // No connector on the other end, yet frames may be dropped meanwhile (downstream): say both.
  if (s.matches({ running: "waiting" }))
    return { code: "disconnected", error: [c.error, c.problem.text].filter(Boolean).join("; "), bitrate: 0 };
  if (s.matches({ running: "open" }) && c.problem.severe)
    return { code: "error", error: c.problem.text, bitrate: c.traffic.bitrate };
  if (s.matches({ running: { open: "active" } }))
    return { code: "connected", error: c.problem.text, bitrate: c.traffic.bitrate };
  if (s.matches({ running: { open: "quiet" } }))
    return { code: "quiet", error: c.problem.text, bitrate: c.traffic.bitrate };
  return { code: "error", error: c.error, bitrate: 0 };
}
