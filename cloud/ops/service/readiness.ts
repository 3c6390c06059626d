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
  const b = (svc as Partial<Services>).iscp?.broker;
  if (!b) return "the iSCP broker is not attached";
  return b.accepting ? "ok" : "the iSCP broker is shutting down";
}

async function storage(svc: Services): Promise<string> {
  const room = await svc.storageRoom.check();
  return room.ok ? "ok" : room.reason;
}

/** The other peers can be told of changes (always "ok" for a peer on its own). */
function cluster(svc: Services): string {
  return (svc as Partial<Services>).cluster?.bus.status() ?? "ok";
}

export async function readiness(svc: Services): Promise<Readiness> {
  const [db, st] = await Promise.all([database(svc), storage(svc)]);
  const checks = { database: db, broker: broker(svc), storage: st, cluster: cluster(svc) };
  return { ready: Object.values(checks).every((c) => c === "ok"), checks };
}
