// Change notices between peers: "I committed a change; drop what you cached of it". The state itself is
// always in the database; a notice only says when to look again, so a lost one (NATS away) costs
// staleness until the reload that follows the reconnect, never data.
import { bytesJson, jsonBytes, type ClusterBus } from "./bus.js";

/** Every notice subject, in one place. */
export const NOTICES = {
  /** Access tokens revoked: `{entries: [{jti, expiresAt}]}`, added to every denylist at once. */
  revoked: "cloud.notice.oauth.revoked",
  /** Signing keys changed (rotation): every peer reloads its key set and JWKS. */
  keys: "cloud.notice.oauth.keys",
  /** An OAuth2 client or its secrets changed: `{clientId}`. */
  client: "cloud.notice.oauth.client",
  /** A sign-in attempt counted against `{limiter, key}`: the rate limits hold for the cluster, not per peer. */
  signInAttempt: "cloud.notice.oauth.sign-in-attempt",
  /** A failed password sign-in `{of: "name" | "address", key}` (or a name `cleared`): the back-off holds for the cluster. */
  signInBackOff: "cloud.notice.accounts.sign-in-backoff",
  /** The organisation (groups, projects, members, edges) changed: every peer reloads its access index. */
  org: "cloud.notice.org.changed",
} as const;

export type NoticeName = keyof typeof NOTICES;

export function notify(bus: ClusterBus, name: NoticeName, payload: object = {}): void {
  if (bus.kind === "in-process") return;
  bus.publish(NOTICES[name], jsonBytes(payload));
}

/** Runs `fn` for each notice another peer sends, and `resync` (default: `fn({})`) after a bus outage. */
export function onNotice<T extends object>(
  bus: ClusterBus,
  name: NoticeName,
  fn: (payload: Partial<T>) => void,
  resync?: () => void,
): void {
  bus.subscribe(NOTICES[name], (data) => {
    let payload: Partial<T>;
    try {
      payload = bytesJson<Partial<T>>(data);
    } catch {
      return; // not one of ours
    }
    fn(payload);
  });
  bus.onResync(resync ?? (() => fn({})));
}
