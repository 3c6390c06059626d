// What the machines that supervise a link (streams, IPC channels, deferred upload) share: traffic counting
// while it is open, the countdown to a retry, and taking a new session. Spread the guards and actions into
// the machine's setup(); the state pieces name them.
import { assign, type EventObject, type MachineContext } from "xstate";
import { addBytes, isIdle, noTraffic, sessionKey, tickTraffic, type Session, type Traffic } from "./vocabulary.js";

interface TrafficContext extends MachineContext {
  traffic: Traffic;
  retryIn: number;
}
interface SessionContext extends MachineContext {
  session?: Session;
  sessionReason?: string;
}
type SessionEvent = { type: "SESSION"; session?: Session; reason: string };
const isSessionEvent = (e: EventObject): e is SessionEvent => e.type === "SESSION";

export const linkGuards = {
  retryDue: ({ context }: { context: { retryIn: number } }) => context.retryIn <= 1,
  idle: ({ context }: { context: { traffic: Traffic } }) => isIdle(tickTraffic(context.traffic)),
};

// The actions are made for each machine (its context and events: xstate types an action by the whole machine); they
// read and write only the fields named here and raise no events.
type Update<C extends MachineContext, E extends EventObject> = (args: { context: C; event: E }) => Partial<C>;
const update = <C extends MachineContext, E extends EventObject>(f: Update<C, E>) =>
  assign<C, E, undefined, E, never>(f);

export function linkActions<C extends TrafficContext, E extends EventObject>() {
  return {
    /** One tick of the clock: the bitrate of the last second, idle ticks counted. */
    tick: update<C, E>(({ context }) => ({ traffic: tickTraffic(context.traffic) }) as Partial<C>),
    /** Bytes moved (a DATA event). */
    count: update<C, E>(
      ({ context, event }) =>
        ({
          traffic: addBytes(context.traffic, event.type === "DATA" ? (event as { bytes?: number }).bytes! : 0),
        }) as Partial<C>,
    ),
    countDown: update<C, E>(({ context }) => ({ retryIn: context.retryIn - 1 }) as Partial<C>),
    noTraffic: update<C, E>(() => ({ traffic: noTraffic() }) as Partial<C>),
  };
}

/** For machines that get sessions from the connection machine. */
export const sessionGuards = {
  sessionChanged: ({ context, event }: { context: { session?: Session }; event: EventObject }) =>
    isSessionEvent(event) && sessionKey(event.session) !== sessionKey(context.session),
};
export function sessionActions<C extends SessionContext, E extends EventObject>() {
  return {
    takeSession: update<C, E>(({ event }) =>
      isSessionEvent(event) ? ({ session: event.session, sessionReason: event.reason } as Partial<C>) : {},
    ),
  };
}

/** A new session restarts the link from `checking`; a refreshed token only replaces the session's token. */
export const onSession = {
  SESSION: [
    { guard: "sessionChanged", target: ".checking", reenter: true, actions: "takeSession" },
    { actions: "takeSession" },
  ],
} as const;

/** An open link's sub-states: `quiet` until data comes (DATA enters `active`), `active` until it idles. */
export const trafficStates = {
  quiet: { on: { TICK: { actions: "tick" } } },
  active: { on: { TICK: [{ guard: "idle", target: "quiet", actions: "tick" }, { actions: "tick" }] } },
} as const;

/** Waiting `retryIn` ticks without traffic, then on to `target`. */
export const retrying = <T extends string>(target: T) =>
  ({
    entry: "noTraffic",
    on: { TICK: [{ guard: "retryDue", target }, { actions: "countDown" }] },
  }) as const;
