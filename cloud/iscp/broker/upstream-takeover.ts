// An upstream resumed on this broker although another instance held it (that instance died, or its
// connection went away while the agent reconnected through a balancer to here). The holder, if it still
// runs, lets it go; the stream is then rebuilt from the shared state written at open (options.ts
// UpstreamStates). Chunks the agent sends again are stored by sequence number, so one the other instance
// stored but never acknowledged is acknowledged here without being stored twice.
import { bytesToUuid, uuidToBytes } from "../../../proto/wire/uuid.js";
import type { ServerConn } from "./conn.js";
import type { UpstreamInfo, UpstreamSnapshot } from "./options.js";
import { UpstreamStream } from "./upstream.js";

/** Stored chunk numbers read at a takeover: the client re-sends only what is unacknowledged, a window of recent ones. */
const STORED_WINDOW = 4096;

/** What the shared state keeps of an upstream. */
export function snapshotOf(u: UpstreamStream): UpstreamSnapshot {
  return {
    info: u.info,
    ackIntervalMs: u.ackIntervalMs,
    expiryMs: u.expiryMs,
    streamAlias: u.alias,
    aliases: u.aliasList(),
  };
}

/**
 * The upstream as taken over from another instance, added to the hub (detached); "attached" when a live
 * connection still uses it there; undefined when there is none this connection may resume.
 */
export async function takeOver(
  c: ServerConn,
  streamId: Uint8Array | null | undefined,
): Promise<UpstreamStream | "attached" | undefined> {
  const states = c.hub.hooks.upstreamStates;
  let id: string;
  try {
    id = bytesToUuid(streamId);
  } catch {
    return undefined;
  }
  // Held here but not this connection's (findOwn said so): nothing to take over.
  if (!states || c.hub.upstreams.has(id)) return undefined;
  if ((await c.hub.remote?.release(id)) === "attached") return "attached";
  const mine = (info: UpstreamInfo) =>
    info.projectUuid === c.projectUuid && info.subject.uuid === c.subject.uuid && info.nodeId === c.nodeId;
  const snap = await states.takeOver(id, mine);
  // What the other instance stored counts as received here: its re-sent copies are acknowledged, not relayed twice.
  const stored = snap ? ((await c.hub.hooks.storedSequenceNumbers?.(snap.info, STORED_WINDOW)) ?? []) : [];
  // Resumed here meanwhile (a second request of the same client): that one stands.
  const here = c.hub.upstreams.get(id);
  if (here) return mine(here.info) ? here : undefined;
  if (!snap) return undefined;
  const L = c.hub.limits;
  const u = new UpstreamStream(
    id,
    uuidToBytes(id),
    snap.info,
    snap.ackIntervalMs,
    snap.expiryMs,
    L.maxDataIdAliases,
    L.maxOutgoingFrameBytes,
  );
  u.restoreAliases(snap.aliases);
  u.alias = snap.streamAlias;
  stored.sort((x, y) => x - y);
  for (const n of stored) u.seqs.add(n);
  u.lastSequenceNumber = stored.at(-1) ?? 0;
  c.hub.addUpstream(u);
  // Detached until the resume attaches it (which stops this clock); expires like any stream otherwise.
  c.hub.scheduleUpstreamExpiry(u);
  c.hub.logger.info({ streamId: id }, "iscp upstream taken over from another instance");
  return u;
}
