// The rules of the settings beyond single fields: unique ids, references between items (dest_ids),
// defaults that depend on the deployment (FIFO paths), and what deleting a referenced item does.
// Bodies arrive already decoded by the schemas; this layer throws SettingsError, which the API maps
// to 404/409/400. All store writes are synchronous, so no two requests interleave inside a method.
import path from "node:path";
import { filterConsistencyError } from "../filters/schema.js";
import { launchRefusal, type LaunchPolicy } from "../ipc/launch-policy.js";
import {
  DEFERRED_ID,
  normaliseUpstream,
  type ConnectionSettings,
  type DeferredUploadSettings,
  type Filter,
  type TransportSettings,
} from "./schemas.js";
import type { CollectionName, Collections, SettingsStore, SingletonName, Singletons } from "./store.js";

export class SettingsError extends Error {
  constructor(
    readonly kind: "not_found" | "conflict" | "invalid" | "forbidden",
    readonly detail: string,
  ) {
    super(detail);
  }
}
const notFound = (what: string, id: string) => new SettingsError("not_found", `${what} "${id}" is not found`);
const invalid = (detail: string) => new SettingsError("invalid", detail);
const conflict = (detail: string) => new SettingsError("conflict", detail);

export const LABELS: Record<CollectionName, string> = {
  upstreams: "upstream",
  downstreams: "downstream",
  upstream_ipcs: "upstream device-connector IPC",
  downstream_ipcs: "downstream device-connector IPC",
  upstream_filters: "upstream filter",
  downstream_filters: "downstream filter",
};

type Item<C extends CollectionName> = Collections[C];
/** Update bodies: any field of the item; `launch: null` removes the launch object. */
type Patch = Record<string, unknown> & { id?: string };

export class SettingsService {
  constructor(
    readonly store: SettingsStore,
    /** Where FIFOs go when a device-connector IPC is created without an `ipc` object. */
    private readonly ipcDir: string,
    /** Where FIFOs and launched programs may come from; every path is allowed when absent (tests of other rules). */
    private readonly launchPolicy?: LaunchPolicy,
  ) {}

  getSingleton<K extends SingletonName>(name: K): Singletons[K] {
    return this.store.getSingleton(name);
  }

  updateConnection(patch: Partial<ConnectionSettings>): ConnectionSettings {
    return this.updateSingleton("connection", patch);
  }
  updateTransport(patch: Partial<TransportSettings>): TransportSettings {
    return this.updateSingleton("transport", patch);
  }
  updateDeferredUpload(patch: Partial<DeferredUploadSettings>): DeferredUploadSettings {
    return this.updateSingleton("deferred_upload", patch);
  }

  list<C extends CollectionName>(name: C): Item<C>[] {
    return this.store.list(name);
  }

  get<C extends CollectionName>(name: C, id: string): Item<C> {
    const item = this.store.get(name, id);
    if (!item) throw notFound(LABELS[name], id);
    return item;
  }

  create<C extends CollectionName>(name: C, body: Record<string, unknown> & { id: string }): Item<C> {
    if (this.store.has(name, body.id)) throw conflict(`${LABELS[name]} "${body.id}" already exists`);
    const item = this.complete(name, stripUndefined(body));
    this.check(name, item);
    this.store.put(name, item);
    return item;
  }

  update<C extends CollectionName>(name: C, id: string, patch: Patch): Item<C> {
    const current = this.get(name, id);
    if (patch.id !== undefined && patch.id !== id)
      throw invalid(`id: cannot be changed (path id "${id}", body id "${patch.id}")`);
    const merged: Record<string, unknown> = { ...current };
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) continue;
      if (v === null) delete merged[k];
      else merged[k] = v;
    }
    const item = this.complete(name, merged);
    this.check(name, item);
    this.store.put(name, item);
    return item;
  }

  delete(name: CollectionName, id: string): void {
    this.get(name, id);
    const users = this.referrers(name, id);
    if (users.length > 0) {
      throw conflict(
        `${LABELS[name]} "${id}" is still named in dest_ids of ${users.join(", ")}; remove it there first`,
      );
    }
    this.store.remove(name, id);
  }

  private updateSingleton<K extends SingletonName>(name: K, patch: Partial<Singletons[K]>): Singletons[K] {
    const next = { ...this.store.getSingleton(name), ...stripUndefined(patch) } as Singletons[K];
    this.store.setSingleton(name, next);
    return next;
  }

  /** Fills what depends on the deployment and applies cross-field rules. */
  private complete<C extends CollectionName>(name: C, raw: Record<string, unknown>): Item<C> {
    switch (name) {
      case "upstreams":
        return normaliseUpstream(raw as never) as Item<C>;
      case "upstream_ipcs":
      case "downstream_ipcs":
        if (raw.ipc === undefined) {
          const dir = name === "upstream_ipcs" ? "up" : "down";
          raw.ipc = { type: "fifo", path: path.join(this.ipcDir, `${dir}-${encodeURIComponent(String(raw.id))}.fifo`) };
        }
        return raw as Item<C>;
      default:
        return raw as Item<C>;
    }
  }

  /** Cross-item rules: dest_ids must name existing items; FIFO paths must not be shared. */
  private check<C extends CollectionName>(name: C, item: Item<C>): void {
    if (name === "upstream_ipcs") {
      const ids = (item as Item<"upstream_ipcs">).dest_ids;
      ids.forEach((d, i) => {
        if (d !== DEFERRED_ID && !this.store.has("upstreams", d))
          throw invalid(`dest_ids[${i}]: upstream "${d}" does not exist (use an upstream id or "${DEFERRED_ID}")`);
      });
    }
    if (name === "downstreams") {
      (item as Item<"downstreams">).dest_ids.forEach((d, i) => {
        if (!this.store.has("downstream_ipcs", d))
          throw invalid(`dest_ids[${i}]: downstream device-connector IPC "${d}" does not exist`);
      });
    }
    if (name === "upstream_ipcs" || name === "downstream_ipcs") {
      const me = item as Item<"upstream_ipcs">;
      for (const other of ["upstream_ipcs", "downstream_ipcs"] as const) {
        const clash = this.store
          .list(other)
          .find((o) => o.ipc.path === me.ipc.path && !(other === name && o.id === me.id));
        if (clash) throw conflict(`ipc.path: "${me.ipc.path}" is already used by ${LABELS[other]} "${clash.id}"`);
      }
      const refused = this.launchPolicy && launchRefusal(this.launchPolicy, me);
      if (refused) throw new SettingsError("forbidden", refused);
    }
    if (name === "upstream_filters" || name === "downstream_filters") {
      const f = item as Filter;
      const problem = filterConsistencyError(f.type, f.change_to);
      if (problem) throw invalid(`change_to.type: ${problem}`);
    }
  }

  /** Who names `id` in dest_ids: upstream IPCs name upstreams, downstreams name downstream IPCs. */
  private referrers(name: CollectionName, id: string): string[] {
    if (name === "upstreams")
      return this.store
        .list("upstream_ipcs")
        .filter((c) => c.dest_ids.includes(id))
        .map((c) => `${LABELS.upstream_ipcs} "${c.id}"`);
    if (name === "downstream_ipcs")
      return this.store
        .list("downstreams")
        .filter((d) => d.dest_ids.includes(id))
        .map((d) => `${LABELS.downstreams} "${d.id}"`);
    return [];
  }
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
