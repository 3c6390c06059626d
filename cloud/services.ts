// The service container handed to every handler. Areas (accounts, oauth, organisation, iscp...)
// add their own members by declaration merging (`declare module "../services.js"`), so this
// file never needs to know them and modules import downward only.
import type { Logger } from "pino";
import type { CloudConfig } from "./config.js";
import type { Db } from "./storage/db.js";
import type { AccessDecider, Authenticator } from "./auth/principal.js";
import type { StorageRoom } from "./storage/room.js";
import type { CloudMetrics } from "./metrics.js";

export interface Services {
  config: CloudConfig;
  log: Logger;
  db: Db;
  /** Whether the data directory has room (storage-full failures are reported to it). */
  storageRoom: StorageRoom;
  /** This peer's Prometheus registry and metrics (cloud/metrics.ts). */
  metrics: CloudMetrics;
  authenticators: Authenticator[];
  access: AccessDecider;
  /** Called on shutdown, in reverse order of registration. */
  onClose: Array<() => Promise<void> | void>;
  /** Called with the new pair when the --tls-cert / --tls-key files were reloaded (SIGHUP) and passed the checks. */
  onTlsReload: Array<(pair: { cert: string; key: string }) => void>;
}
