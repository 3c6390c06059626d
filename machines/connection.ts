// Connection lifecycle: holds a token for the configured edge and refreshes it before it expires.
// unconfigured (no secret) → authenticating → authenticated ⇄ refreshing; a failed first request waits
// RETRY_TICKS in `failed`; a failed refresh keeps the token held and tries again from `authenticated`.
// The supervisor turns `authenticated` snapshots into the Session that streams connect with; it also
// provides the token request (`fetchToken`), so this definition does no I/O itself.
import { assign, type DoneActorEvent, type ErrorActorEvent, fromPromise, setup, type SnapshotFrom } from "xstate";
import type { ConnectionSettings, TransportSettings } from "../runtime/settings/schemas.js";
import { RETRY_TICKS, errorMessage, type Report, type Session } from "./vocabulary.js";

export interface Token {
  accessToken: string;
  /** Seconds until the token expires, as the server said. */
  expiresIn: number;
}
/** The token endpoint refused the request (the credentials), as opposed to not answering. */
export class TokenRejectedError extends Error {}

/** The token request the composition root provides as the `fetchToken` actor. */
export type TokenFetch = (c: ConnectionSettings, signal?: AbortSignal) => Promise<Token>;

/** Why these settings cannot authenticate, or undefined when they can. */
export function incompleteConnection(c: ConnectionSettings): string | undefined {
  if (c.client_secret === "") return "client_secret is not set";
  return undefined;
}

/** Wraps a token request as the machine's `fetchToken` actor (aborted when the machine leaves the state). */
export const tokenActor = (fetch: TokenFetch) =>
  fromPromise<Token, ConnectionSettings>(({ input, signal }) => fetch(input, signal));

export interface ConnectionInput {
  connection: ConnectionSettings;
  transport: TransportSettings;
}
export type ConnectionEvent =
  | { type: "SETTINGS"; connection: ConnectionSettings; transport: TransportSettings }
  | { type: "TICK" };

interface Context extends ConnectionInput {
  token?: Token;
  /** Ticks until the token should be refreshed (at 80 % of its lifetime), or refreshed again after a failure. */
  refreshIn: number;
  /** Refreshes failed in a row since the token held was obtained. */
  refreshFailures: number;
  retryIn: number;
  error: string;
}

/** The token request: its answer is held and refreshed at 80 % of its lifetime; a failure waits RETRY_TICKS. */
const fetchToken = {
  id: "fetchToken",
  src: "fetchToken",
  input: ({ context }: { context: Context }) => context.connection,
  onDone: { target: "authenticated", actions: "holdToken" },
  onError: { target: "failed", actions: "tokenFailed" },
} as const;

/**
 * A refresh the cloud did not answer (a network cut kills one under way) keeps the token held: the streams
 * it opened stay open (an open iSCP connection needs no new token) and their reconnects use it, or its
 * successor once one comes. The first retry comes at the next tick (a short-lived token may expire before
 * RETRY_TICKS), later ones every RETRY_TICKS. Credentials the cloud refuses end the session, as at first.
 */
const refreshToken = {
  ...fetchToken,
  onError: [
    { guard: "rejected", target: "failed", actions: "tokenFailed" },
    { target: "authenticated", actions: "refreshFailed" },
  ],
} as const;

export const connectionMachine = setup({
  types: { context: {} as Context, events: {} as ConnectionEvent, input: {} as ConnectionInput },
  actors: {
    fetchToken: tokenActor(() => Promise.reject(new Error("no token request provided"))),
  },
  guards: {
    incomplete: ({ context }) => incompleteConnection(context.connection) !== undefined,
    changed: ({ context, event }) =>
      event.type === "SETTINGS" &&
      JSON.stringify([event.connection, event.transport]) !== JSON.stringify([context.connection, context.transport]),
    refreshDue: ({ context }) => context.refreshIn <= 1,
    retryDue: ({ context }) => context.retryIn <= 1,
    // Run only as the fetchToken actor's onError.
    rejected: ({ event }) => (event as unknown as ErrorActorEvent).error instanceof TokenRejectedError,
  },
  actions: {
    // Run only as the fetchToken actor's onDone and onError (the setup types events as the machine's own).
    holdToken: assign(({ event }) => {
      const token = (event as unknown as DoneActorEvent<Token>).output;
      return { token, refreshIn: Math.max(1, Math.floor(token.expiresIn * 0.8)), refreshFailures: 0, error: "" };
    }),
    refreshFailed: assign(({ context, event }) => ({
      error: `token refresh failed: ${errorMessage((event as unknown as ErrorActorEvent).error)}`,
      refreshIn: context.refreshFailures === 0 ? 1 : RETRY_TICKS,
      refreshFailures: context.refreshFailures + 1,
    })),
    tokenFailed: assign(({ event }) => ({
      error: errorMessage((event as unknown as ErrorActorEvent).error),
      token: undefined,
      retryIn: RETRY_TICKS,
    })),
  },
}).createMachine({
  id: "connection",
  context: ({ input }) => ({ ...input, refreshIn: 0, refreshFailures: 0, retryIn: 0, error: "" }),
  initial: "checking",
  on: {
    SETTINGS: {
      guard: "changed",
      target: ".checking",
      reenter: true,
      actions: assign(({ event }) => ({ connection: event.connection, transport: event.transport, token: undefined })),
    },
  },
  states: {
    checking: {
      always: [{ guard: "incomplete", target: "unconfigured" }, { target: "authenticating" }],
    },
    unconfigured: {
      entry: assign(({ context }) => ({ error: incompleteConnection(context.connection) ?? "", token: undefined })),
    },
    authenticating: {
      invoke: fetchToken,
    },
    authenticated: {
      on: {
        TICK: [
          { guard: "refreshDue", target: "refreshing" },
          { actions: assign(({ context }) => ({ refreshIn: context.refreshIn - 1 })) },
        ],
      },
    },
    // Like authenticating, but the current token stays usable while a new one is fetched, and after a failure.
    refreshing: {
      invoke: refreshToken,
    },
    failed: {
      on: {
        TICK: [
          { guard: "retryDue", target: "authenticating" },
          { actions: assign(({ context }) => ({ retryIn: context.retryIn - 1 })) },
        ],
      },
    },
  },
});

export type ConnectionSnapshot = SnapshotFrom<typeof connectionMachine>;

/** The session streams may use, or why there is none. */
export function sessionOf(s: ConnectionSnapshot): { session?: Session; reason: string } {
  const { token, connection, transport, error } = s.context;
  if ((s.matches("authenticated") || s.matches("refreshing")) && token)
    return { session: { connection, transport, accessToken: token.accessToken }, reason: "" };
  if (s.matches("unconfigured")) return { reason: `connection settings incomplete: ${error}` };
  if (s.matches("failed")) return { reason: `authentication failed: ${error}` };
  return { reason: "authenticating with the server" };
}

/** Connection state (for logs and agentctl state): none until configured, error while failing. */
export function reportConnection(s: ConnectionSnapshot): Report {
  if (s.matches("unconfigured")) return { code: "none", error: s.context.error, bitrate: 0 };
  if (s.matches("failed")) return { code: "error", error: s.context.error, bitrate: 0 };
  // Connected with the error of a failed refresh while the token held is still used.
  if (s.matches("authenticated") || s.matches("refreshing"))
    return { code: "connected", error: s.context.error, bitrate: 0 };
  return { code: "disconnected", error: "", bitrate: 0 };
}
