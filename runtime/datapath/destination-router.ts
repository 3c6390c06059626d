// Fans accepted points out to the destinations in a channel's dest_ids (upstream ids or `deferred`).
// Each destination is whatever takes points durably for it (a ChunkBatcher on its current sequence, or an
// in-memory sender for persist: false upstreams). The batch counts as accepted once every destination
// accepted it; points for a destination that does not exist (disabled or deleted upstream) are counted.
import type { DataPoint } from "../datapoint.js";

export interface Destination {
  push(points: readonly DataPoint[]): Promise<void> | void;
}

export class DestinationRouter {
  private readonly dests = new Map<string, Destination>();
  /** Points addressed to destinations that were not there, per destination id. */
  readonly unrouted = new Map<string, number>();

  /** Sets (or with undefined removes) the destination for an id. */
  set(destId: string, dest: Destination | undefined): void {
    if (dest === undefined) this.dests.delete(destId);
    else this.dests.set(destId, dest);
  }

  has(destId: string): boolean {
    return this.dests.has(destId);
  }

  /** The sink of an upstream channel: resolves when every existing destination accepted the batch. */
  route(points: readonly DataPoint[], destIds: readonly string[]): Promise<void> | void {
    let waits: Array<Promise<void>> | undefined;
    for (const id of destIds) {
      const d = this.dests.get(id);
      if (d === undefined) {
        this.unrouted.set(id, (this.unrouted.get(id) ?? 0) + points.length);
        continue;
      }
      const r = d.push(points);
      if (r !== undefined) (waits ??= []).push(r);
    }
    if (waits === undefined) return undefined;
    return waits.length === 1 ? waits[0] : Promise.all(waits).then(() => undefined);
  }
}
