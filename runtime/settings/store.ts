// Settings persisted in LMDB under <data>/settings. Every write is a synchronous LMDB transaction,
// flushed to disk before it returns, so a response is only sent for settings that survive kill -9.
// Collections keep creation order (filters apply in the order they were created).
import path from "node:path";
import { makeDir, makeLmdbPrivate } from "../private-files.js";
import { open, type Database, type RootDatabase } from "lmdb";
import {
  defaultConnection,
  defaultDeferredUpload,
  defaultTransport,
  type ConnectionSettings,
  type DeferredUploadSettings,
  type DownstreamIpcSettings,
  type DownstreamSettings,
  type Filter,
  type TransportSettings,
  type UpstreamIpcSettings,
  type UpstreamSettings,
} from "./schemas.js";

export interface Collections {
  upstreams: UpstreamSettings;
  downstreams: DownstreamSettings;
  upstream_ipcs: UpstreamIpcSettings;
  downstream_ipcs: DownstreamIpcSettings;
  upstream_filters: Filter;
  downstream_filters: Filter;
}
export type CollectionName = keyof Collections;
export const COLLECTIONS: CollectionName[] = [
  "upstreams",
  "downstreams",
  "upstream_ipcs",
  "downstream_ipcs",
  "upstream_filters",
  "downstream_filters",
];

export interface Singletons {
  connection: ConnectionSettings;
  transport: TransportSettings;
  deferred_upload: DeferredUploadSettings;
}
export type SingletonName = keyof Singletons;
const singletonDefaults: { [K in SingletonName]: () => Singletons[K] } = {
  connection: defaultConnection,
  transport: defaultTransport,
  deferred_upload: defaultDeferredUpload,
};

/** Everything the supervisor needs to bring the machines in line with the settings. */
export type AllSettings = Singletons & { [K in CollectionName]: Collections[K][] };

/** The settings' LMDB file, in `<data>/settings/`. */
export const SETTINGS_LMDB = "settings.lmdb";

interface Row<T> {
  seq: number;
  value: T;
}

export class SettingsStore {
  private readonly root: RootDatabase;
  private readonly singletons: Database<unknown, string>;
  private readonly collections = new Map<CollectionName, Database<Row<unknown>, string>>();
  private seq = 0;
  private readonly listeners = new Set<(all: AllSettings) => void>();

  private constructor(
    dir: string,
    private readonly onListenerError: (err: unknown) => void,
  ) {
    makeDir(dir, 0o700);
    this.root = open({ path: path.join(dir, SETTINGS_LMDB), maxDbs: 16, compression: false });
    makeLmdbPrivate(path.join(dir, SETTINGS_LMDB));
    this.singletons = this.root.openDB<unknown, string>({ name: "singletons" });
    for (const name of COLLECTIONS) {
      const db = this.root.openDB<Row<unknown>, string>({ name });
      this.collections.set(name, db);
      for (const { value } of db.getRange()) this.seq = Math.max(this.seq, value.seq);
    }
  }

  /**
   * Opens (or creates) the store in `dataDir`/settings. `onListenerError` hears what a change listener
   * threw (default: printed to stderr); the write itself is committed by then and stands.
   */
  static open(dataDir: string, opts: { onListenerError?: (err: unknown) => void } = {}): SettingsStore {
    return new SettingsStore(
      path.join(dataDir, "settings"),
      opts.onListenerError ?? ((e) => console.error("settings listener failed:", e)),
    );
  }

  /** The LMDB environment, for other parts of the agent that keep their own tables beside the settings. */
  get env(): RootDatabase {
    return this.root;
  }

  getSingleton<K extends SingletonName>(name: K): Singletons[K] {
    const stored = this.singletons.get(name) as Partial<Singletons[K]> | undefined;
    // Merging with the defaults lets later versions add fields without a migration.
    return { ...singletonDefaults[name](), ...(stored ?? {}) } as Singletons[K];
  }

  setSingleton<K extends SingletonName>(name: K, value: Singletons[K]): void {
    this.root.transactionSync(() => this.singletons.putSync(name, value));
    this.emit();
  }

  list<C extends CollectionName>(name: C): Collections[C][] {
    const rows = [...this.db(name).getRange()].map((e) => e.value as Row<Collections[C]>);
    return rows.sort((a, b) => a.seq - b.seq).map((r) => r.value);
  }

  get<C extends CollectionName>(name: C, id: string): Collections[C] | undefined {
    return (this.db(name).get(id) as Row<Collections[C]> | undefined)?.value;
  }

  has(name: CollectionName, id: string): boolean {
    return this.db(name).doesExist(id);
  }

  /** Inserts or replaces; a replaced item keeps its position. */
  put<C extends CollectionName>(name: C, value: Collections[C]): void {
    const db = this.db(name);
    const existing = db.get(value.id);
    const seq = existing?.seq ?? ++this.seq;
    this.root.transactionSync(() => db.putSync(value.id, { seq, value }));
    this.emit();
  }

  remove(name: CollectionName, id: string): boolean {
    const db = this.db(name);
    if (!db.doesExist(id)) return false;
    this.root.transactionSync(() => db.removeSync(id));
    this.emit();
    return true;
  }

  all(): AllSettings {
    const out: Partial<AllSettings> = {};
    for (const name of Object.keys(singletonDefaults) as SingletonName[])
      (out as Record<string, unknown>)[name] = this.getSingleton(name);
    for (const name of COLLECTIONS) (out as Record<string, unknown>)[name] = this.list(name);
    return out as AllSettings;
  }

  /** Called after every committed change with the whole configuration. */
  onChange(listener: (all: AllSettings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.root.close();
  }

  private db(name: CollectionName): Database<Row<unknown>, string> {
    const db = this.collections.get(name);
    if (!db) throw new Error(`unknown collection ${name}`);
    return db;
  }

  private emit(): void {
    if (this.listeners.size === 0) return;
    const all = this.all();
    // Each listener on its own: one failing must not hide the change from the others (the supervisor)
    // nor turn an already committed write into an error response.
    for (const l of this.listeners) {
      try {
        l(all);
      } catch (e) {
        this.onListenerError(e);
      }
    }
  }
}
