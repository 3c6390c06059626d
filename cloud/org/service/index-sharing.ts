// The organisation index across peers (--nats). A local update tells the other peers (one notice per tick
// however many updates); a notice from another peer reloads the whole index from the database. A notice
// arrives a moment after the write it announces (or not at all while NATS is away), so an access check
// that finds nothing asks for a reload that starts after it and decides again: an edge or member made
// through one peer is known to the others at once. Reloads coalesce and start at most every MIN_GAP_MS,
// so refused requests cannot make a peer read its organisation over and over.
import type { ClusterBus } from "../../cluster/service/bus.js";
import { notify, onNotice } from "../../cluster/service/notices.js";
import type { Queryable } from "../../database/db.js";
import type { OrgIndex } from "./org-index.js";

const MIN_GAP_MS = 250;

/** Resolves once a reload that started after the call has finished (at once alone: the index is the database's). */
export type Freshen = () => Promise<void>;

export const alwaysFresh: Freshen = () => Promise.resolve();

class IndexReloader {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private lastStart = -Infinity;

  constructor(
    private readonly reload: () => Promise<void>,
    private readonly warn: (err: unknown) => void,
  ) {}

  /** The next reload to start: callers while one runs share the one after it. */
  next(): Promise<void> {
    if (this.queued) return this.queued;
    const before = this.running ?? Promise.resolve();
    this.queued = before
      .then(() => new Promise((r) => setTimeout(r, Math.max(0, this.lastStart + MIN_GAP_MS - performance.now()))))
      .then(() => {
        this.queued = undefined;
        return this.start();
      });
    return this.queued;
  }

  private start(): Promise<void> {
    this.lastStart = performance.now();
    const run = this.reload()
      .catch(this.warn)
      .finally(() => {
        if (this.running === run) this.running = undefined;
      });
    this.running = run;
    return run;
  }
}

export function shareOrgIndex(bus: ClusterBus, db: Queryable, index: OrgIndex, warn: (err: unknown) => void): Freshen {
  if (bus.kind === "in-process") return alwaysFresh;
  let told = false;
  index.onUpdate = () => {
    if (told) return;
    told = true;
    queueMicrotask(() => {
      told = false;
      notify(bus, "org");
    });
  };
  const reloader = new IndexReloader(() => index.reload(db), warn);
  onNotice(bus, "org", () => void reloader.next());
  return () => reloader.next();
}
