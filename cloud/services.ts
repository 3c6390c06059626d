// The service container handed to every handler. The core members below exist before any module
// runs (cloud/server.ts makes them); each area adds its own members by declaration merging
// (`declare module "../services.js"`) and provides them from its module's `provide`, in the order of
// cloud/modules.ts, whose types check that every module gets what it needs.
import type { Logger } from "pino";
import type { CloudConfig } from "./config.js";
import type { Db } from "./database/db.js";
import type { AccessDecider, Authenticator } from "./auth/principal.js";
import type { StorageRoom } from "./database/room.js";
import type { CloudMetrics } from "./metrics.js";
import type { DomainEvents } from "./events.js";

export interface CoreServices {
  config: CloudConfig;
  log: Logger;
  db: Db;
  /** Whether the data directory has room (storage-full failures are reported to it). */
  storageRoom: StorageRoom;
  /** This peer's Prometheus registry and metrics (cloud/metrics.ts). */
  metrics: CloudMetrics;
  /** Extension point: asked in order for a request's principal; filled from the modules' `authenticators`. */
  authenticators: Authenticator[];
  /** Extension point: domain events (cloud/events.ts); modules subscribe with their `on`. */
  events: DomainEvents;
  /** Extension point (close hooks): called on shutdown, in reverse order of registration. */
  onClose: Array<() => Promise<void> | void>;
  /** Extension point: called with the new pair when the --tls-cert / --tls-key files were reloaded (SIGHUP) and passed the checks. */
  onTlsReload: Array<(pair: { cert: string; key: string }) => void>;
}

export interface Services extends CoreServices {
  /** The guard's access decision (provided by the access module). */
  access: AccessDecider;
}
