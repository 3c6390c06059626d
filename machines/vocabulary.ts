// Shared vocabulary of the lifecycle machines: the clock, the session the connection machine hands to
// streams, and the report every machine's snapshot maps to (the API's state objects).
import type { ConnectionSettings, StateCode, TransportSettings } from "../runtime/settings/schemas.js";

/** Everything a stream needs to open an iSCP connection. Present only while a token is held. */
export interface Session {
  connection: ConnectionSettings;
  transport: TransportSettings;
  accessToken: string;
  /**
   * The token held now (refreshed since this session was handed out), for connections that outlive a
   * token: an iSCP client's own reconnect and resume, a long deferred upload. Absent: use accessToken.
   */
  currentToken?: () => string;
}

/** The freshest token a session knows. */
export const tokenOf = (s: Session) => s.currentToken?.() || s.accessToken;

/** Streams reconnect when this changes; a refreshed token alone does not reconnect them. */
export const sessionKey = (s: Session | undefined) =>
  s ? JSON.stringify([s.connection.server_url, s.connection.project_uuid, s.connection.edge_uuid, s.transport]) : "";

/** What a machine's snapshot says in the API (update_time is stamped by the supervisor). */
export interface Report {
  code: StateCode;
  error: string;
  bitrate: number;
}

/** The supervisor's clock: one TICK per second drives bitrates, quiet detection and retries. */
export const TICK_MS = 1000;
/** Without data for this many ticks a connected stream or channel counts as `quiet`. */
export const QUIET_AFTER_TICKS = 5;
/** Ticks to wait before retrying a failed token request, channel or upload. */
export const RETRY_TICKS = 5;
/** Upper bound of a stream's reconnection backoff, in ticks. */
export const MAX_BACKOFF_TICKS = 30;

/**
 * Ticks before the n-th consecutive retry of a stream (n >= 1): exponential (1, 2, 4, ... up to
 * MAX_BACKOFF_TICKS) with jitter in [50 %, 100 %]. The jitter is a hash of `key` (edge and stream) and n,
 * so many edges that lost the same cloud spread out, while one edge's behaviour stays reproducible.
 */
export function backoffTicks(n: number, key: string): number {
  const ceiling = Math.min(MAX_BACKOFF_TICKS, 2 ** Math.max(0, Math.min(n, 16) - 1));
  let h = 0x811c9dc5;
  for (const ch of `${key}#${n}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return Math.max(1, Math.ceil(ceiling * (0.5 + (h % 1000) / 2000)));
}

/** Traffic bookkeeping shared by streams, channels and deferred upload. */
export interface Traffic {
  /** Bytes since the last tick. */
  bytes: number;
  /** Bits per second measured over the last tick. */
  bitrate: number;
  /** Ticks since the last data. */
  idleTicks: number;
}
export const noTraffic = (): Traffic => ({ bytes: 0, bitrate: 0, idleTicks: QUIET_AFTER_TICKS });
export const addBytes = (t: Traffic, bytes: number): Traffic => ({ ...t, bytes: t.bytes + bytes, idleTicks: 0 });
export const tickTraffic = (t: Traffic): Traffic => ({
  bytes: 0,
  bitrate: Math.round((t.bytes * 8 * 1000) / TICK_MS),
  idleTicks: Math.min(QUIET_AFTER_TICKS, t.bytes > 0 ? 0 : t.idleTicks + 1),
});
export const isIdle = (t: Traffic) => t.idleTicks >= QUIET_AFTER_TICKS;

export const errorMessage = (e: unknown) => (e instanceof Error ? e.message : String(e));
