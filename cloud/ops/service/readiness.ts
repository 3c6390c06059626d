// Readiness of the peer: the database answers, the iSCP broker accepts, storage has room, and (with --nats)
// the other peers can be reached. Each check is cheap enough to poll every second: one trivial statement,
// a flag, one statfs call.
import type { Services } from "../../services.js";

/** A database that does not answer within this is reported not ready (a long transaction holds it). */
const DB_TIMEOUT_MS = 2_000;

export type CheckName = "database" | "broker" | "storage" | "cluster";
export interface Readiness {
  ready: boolean;
  /** "ok", or why the part is not ready. */
  checks: Record<CheckName, string>;
}

async function database(svc: Services): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`the database did not answer within ${DB_TIMEOUT_MS} ms`), DB_TIMEOUT_MS);
  });
  try {
    return await Promise.race([svc.db.ping().then(() => "ok"), late]);
  } catch (e) {
    return `the database failed: ${(e as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

function broker(svc: Services): string {
  return svc.iscp.broker.accepting ? "ok" : "the iSCP broker is shutting down";
}

async function storage(svc: Services): Promise<string> {
  const room = await svc.storageRoom.check();
  return room.ok ? "ok" : room.reason;
}

/** The other peers can be told of changes (always "ok" for a peer on its own). */
function cluster(svc: Services): string {
  return svc.cluster.bus.status();
}

/**
 * What a stranger is told of a part that is not ready: what, not the details (the database's host and port in a
 * connection error, the exact free bytes); a super user, this host, and /metrics have those.
 */
const PLAIN: Record<CheckName, string> = {
  database: "the database is not ready",
  broker: "the iSCP broker is not ready",
  storage: "storage is full",
  cluster: "the other peers cannot be reached",
};

export function withoutDetails(r: Readiness): Readiness {
  const checks = Object.fromEntries(
    Object.entries(r.checks).map(([k, v]) => [k, v === "ok" ? v : PLAIN[k as CheckName]]),
  ) as Record<CheckName, string>;
  return { ready: r.ready, checks };
}

export async function readiness(svc: Services): Promise<Readiness> {
  const [db, st] = await Promise.all([database(svc), storage(svc)]);
  const checks = { database: db, broker: broker(svc), storage: st, cluster: cluster(svc) };
  return { ready: Object.values(checks).every((c) => c === "ok"), checks };
}
