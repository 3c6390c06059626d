// Settings of the edge agent as effect/Schema values. The same schemas decode request bodies,
// fill defaults, and generate the OpenAPI document (runtime/api/openapi.ts).
// Per resource: `X` is the full shape (stored and returned), `XCreate` decodes a create body into `X`
// (defaults filled), `XUpdate` decodes a partial update body; `normaliseX` applies cross-field rules.
import * as Schema from "effect/Schema";
import { FilterChange, FilterKind, FilterTarget } from "../filters/schema.js";
import { patternError } from "../filters/pattern.js";
import { Ipc, IpcFormat, Launch } from "../ipc/schema.js";

const opt = <S extends Schema.Schema.All>(s: S, value: () => Schema.Schema.Type<S>) =>
  Schema.optionalWith(s, { default: value as never });

/** A string of `min` to `max` characters, counted as Unicode code points (as JSON Schema counts them), not UTF-16 units. */
export const Chars = (min: number, max: number) =>
  Schema.String.pipe(
    Schema.filter(
      (s) => {
        const n = [...s].length;
        return (n >= min && n <= max) || `Expected ${min} to ${max} characters, actual ${n}`;
      },
      { jsonSchema: { minLength: min, maxLength: max } },
    ),
  );
export const Id = Chars(1, 100).annotations({
  identifier: "Id",
  description: "1 to 100 characters",
});
/** The upstream id that means "straight to deferred upload" in device-connector dest_ids. */
export const DEFERRED_ID = "deferred";
export const UpstreamId = Id.pipe(
  Schema.filter((id) => id !== DEFERRED_ID || `the id "${DEFERRED_ID}" is reserved for deferred upload`),
);
export const DestIds = Schema.Array(Id).pipe(
  Schema.filter((ids) => new Set(ids).size === ids.length || "dest_ids must not repeat an id"),
);

// ---- connection and transport ----

export const ZERO_UUID = "00000000-0000-0000-0000-000000000000";
export const DEFAULT_SERVER_URL = "https://example.intdash.invalid";

export const ServerUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((s) => {
    try {
      const u = new URL(s);
      return u.protocol === "https:" || u.protocol === "http:" || "server_url must be an http or https URL";
    } catch {
      return "server_url must be an absolute URL";
    }
  }),
).annotations({ format: "uri" });
const Uuid = Schema.String.pipe(
  Schema.pattern(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/),
).annotations({ format: "uuid", description: "a UUID" });
const ClientSecret = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1024)).annotations({
  format: "password",
});

export const ConnectionSettings = Schema.Struct({
  server_url: ServerUrl,
  project_uuid: Uuid,
  edge_uuid: Uuid,
  /** Empty only until first set: the default has no secret. */
  client_secret: Schema.String.annotations({ format: "password" }),
}).annotations({ identifier: "ConnectionSettings" });
export type ConnectionSettings = typeof ConnectionSettings.Type;
export const ConnectionUpdate = Schema.Struct({
  server_url: Schema.optional(ServerUrl),
  project_uuid: Schema.optional(Uuid),
  edge_uuid: Schema.optional(Uuid),
  client_secret: Schema.optional(ClientSecret),
}).annotations({ identifier: "ConnectionSettingsUpdate" });
export const defaultConnection = (): ConnectionSettings => ({
  server_url: DEFAULT_SERVER_URL,
  project_uuid: ZERO_UUID,
  edge_uuid: ZERO_UUID,
  client_secret: "",
});

export const VerificationResult = Schema.Struct({
  verified: Schema.Boolean,
  edge_name: Schema.String,
  edge_nickname: Schema.String,
  error: Schema.String.annotations({ description: "why verification failed; empty when verified" }),
}).annotations({ identifier: "VerificationResult" });
export type VerificationResult = typeof VerificationResult.Type;

export const Protocol = Schema.Literal("quic", "websocket");
export const SendQueueSize = Schema.Int.pipe(Schema.between(1, 4294967295)).annotations({
  description: "an integer from 1 to 4294967295",
});
// iSCP's per-message DEFLATE as iscp-rs offers it: a level (0 is off), and a context window (2^bits bytes of the
// earlier messages; WebSocket only) or none.
export const CompressionLevel = Schema.Int.pipe(Schema.between(0, 9)).annotations({
  description: "DEFLATE level of the iSCP connections: 0 (off) to 9",
});
export const CompressionWindowBits = Schema.Int.pipe(
  Schema.filter((n) => n === 0 || (n >= 9 && n <= 15) || "compression_window_bits must be 0, or 9 to 15"),
).annotations({
  description:
    "0 (each message compressed alone), or 9 to 15: context takeover with a window of 2^bits bytes (WebSocket only)",
});
export const TransportSettings = Schema.Struct({
  protocol: Protocol,
  send_queue_size: SendQueueSize,
  // Optional in the type (settings written before they existed); the store fills in the defaults, so the API always shows them.
  compression_level: Schema.optional(CompressionLevel),
  compression_window_bits: Schema.optional(CompressionWindowBits),
}).annotations({ identifier: "TransportSettings" });
export type TransportSettings = typeof TransportSettings.Type;
export const TransportUpdate = Schema.Struct({
  protocol: Schema.optional(Protocol),
  send_queue_size: Schema.optional(SendQueueSize),
  compression_level: Schema.optional(CompressionLevel),
  compression_window_bits: Schema.optional(CompressionWindowBits),
}).annotations({ identifier: "TransportSettingsUpdate" });
export const defaultTransport = (): TransportSettings => ({
  protocol: "websocket",
  send_queue_size: 4096,
  compression_level: 0,
  compression_window_bits: 0,
});

// ---- upstream ----

export const Qos = Schema.Literal("partial", "unreliable");
export const FlushPolicy = Schema.Literal("interval", "immediately");
export const FlushInterval = Schema.Int.pipe(Schema.between(1, 100000)).annotations({
  description: "an integer from 1 to 100000 (milliseconds)",
});

const upstreamFields = {
  enabled: Schema.Boolean,
  recover: Schema.Boolean.annotations({ description: "forced to false when persist is false" }),
  persist: Schema.Boolean,
  qos: Qos,
  flush_policy: FlushPolicy,
  flush_interval: FlushInterval,
};
export const UpstreamSettings = Schema.Struct({ id: Id, ...upstreamFields }).annotations({
  identifier: "UpstreamSettings",
});
export type UpstreamSettings = typeof UpstreamSettings.Type;
export const UpstreamCreate = Schema.Struct({
  id: UpstreamId,
  enabled: opt(Schema.Boolean, () => true),
  recover: opt(Schema.Boolean, () => true),
  persist: opt(Schema.Boolean, () => true),
  qos: opt(Qos, () => "unreliable" as const),
  flush_policy: opt(FlushPolicy, () => "interval" as const),
  flush_interval: opt(FlushInterval, () => 5),
}).annotations({ identifier: "UpstreamSettingsCreate" });
export const UpstreamUpdate = Schema.partialWith(Schema.Struct({ id: Id, ...upstreamFields }), {
  exact: true,
}).annotations({
  identifier: "UpstreamSettingsUpdate",
});
export const normaliseUpstream = (u: UpstreamSettings): UpstreamSettings => (u.persist ? u : { ...u, recover: false });

// ---- downstream ----

const Pattern = Schema.String.pipe(Schema.filter((s) => patternError(s) ?? true));
/** One iSCP downstream filter: which source edge, and which data (type/name patterns with `+`/`#`). */
export const DownstreamDataFilter = Schema.Struct({
  src_edge_uuid: Uuid,
  data_filters: Schema.Array(Schema.Struct({ type: Pattern, name: Pattern })).pipe(
    Schema.minItems(1),
    Schema.maxItems(1000),
  ),
}).annotations({ identifier: "DownstreamDataFilter" });
const downstreamFields = {
  enabled: Schema.Boolean,
  dest_ids: DestIds.annotations({ description: "ids of downstream device-connector IPC channels" }),
  qos: Qos,
  filters: Schema.Array(DownstreamDataFilter).pipe(Schema.maxItems(1000)),
};
export const DownstreamSettings = Schema.Struct({ id: Id, ...downstreamFields }).annotations({
  identifier: "DownstreamSettings",
});
export type DownstreamSettings = typeof DownstreamSettings.Type;
export const DownstreamCreate = Schema.Struct({
  id: Id,
  enabled: opt(Schema.Boolean, () => true),
  dest_ids: downstreamFields.dest_ids,
  qos: opt(Qos, () => "unreliable" as const),
  filters: opt(downstreamFields.filters, () => []),
}).annotations({ identifier: "DownstreamSettingsCreate" });
export const DownstreamUpdate = Schema.partialWith(Schema.Struct({ id: Id, ...downstreamFields }), {
  exact: true,
}).annotations({
  identifier: "DownstreamSettingsUpdate",
});

// ---- device-connector IPC ----

/** The prefix alone: whatever follows it, the prefixed name could not become valid if these fail. */
export function dataNamePrefixError(prefix: string): string | undefined {
  if (prefix === "") return undefined;
  if (prefix.startsWith("/")) return "data_name_prefix must not start with `/`";
  if (prefix.includes("//")) return "data_name_prefix must not contain `//`";
  if (prefix.includes("#") || prefix.includes("+")) return "data_name_prefix must not contain `#` or `+`";
  return undefined;
}
export const DataNamePrefix = Schema.String.pipe(
  Schema.maxLength(4096),
  Schema.filter((p) => dataNamePrefixError(p) ?? true),
);

const ipcFields = {
  data_name_prefix: DataNamePrefix,
  enabled: Schema.Boolean,
  format: IpcFormat,
  ipc: Ipc,
  launch: Schema.optional(Launch),
};
export const UpstreamIpcSettings = Schema.Struct({
  id: Id,
  ...ipcFields,
  dest_ids: DestIds.annotations({ description: "upstream ids, or `deferred`" }),
}).annotations({ identifier: "UpstreamIpcSettings" });
export type UpstreamIpcSettings = typeof UpstreamIpcSettings.Type;
export const DownstreamIpcSettings = Schema.Struct({ id: Id, ...ipcFields }).annotations({
  identifier: "DownstreamIpcSettings",
});
export type DownstreamIpcSettings = typeof DownstreamIpcSettings.Type;

/** `ipc` may be omitted on create: the daemon then fills in a FIFO path of its own (see docs/agent-api.md). */
const ipcCreateFields = {
  id: Id,
  data_name_prefix: opt(DataNamePrefix, () => ""),
  enabled: opt(Schema.Boolean, () => true),
  format: IpcFormat,
  ipc: Schema.optional(Ipc),
  launch: Schema.optional(Launch),
};
export const UpstreamIpcCreate = Schema.Struct({
  ...ipcCreateFields,
  dest_ids: UpstreamIpcSettings.fields.dest_ids,
}).annotations({
  identifier: "UpstreamIpcSettingsCreate",
});
export const DownstreamIpcCreate = Schema.Struct(ipcCreateFields).annotations({
  identifier: "DownstreamIpcSettingsCreate",
});
const ipcUpdateFields = {
  id: Schema.optional(Id),
  data_name_prefix: Schema.optional(DataNamePrefix),
  enabled: Schema.optional(Schema.Boolean),
  format: Schema.optional(IpcFormat),
  ipc: Schema.optional(Ipc),
  /** `null` removes the launch object. */
  launch: Schema.optional(Schema.NullOr(Launch)),
};
export const UpstreamIpcUpdate = Schema.Struct({ ...ipcUpdateFields, dest_ids: Schema.optional(DestIds) }).annotations({
  identifier: "UpstreamIpcSettingsUpdate",
});
export const DownstreamIpcUpdate = Schema.Struct(ipcUpdateFields).annotations({
  identifier: "DownstreamIpcSettingsUpdate",
});

// ---- filters (target/change_to variants: runtime/filters/schema.ts) ----

export const Filter = Schema.Struct({
  id: Id,
  enabled: Schema.Boolean,
  type: FilterKind,
  target: FilterTarget,
  change_to: FilterChange,
}).annotations({ identifier: "Filter" });
export type Filter = typeof Filter.Type;
export const FilterCreate = Schema.Struct({
  id: Id,
  enabled: opt(Schema.Boolean, () => true),
  type: FilterKind,
  target: FilterTarget,
  change_to: FilterChange,
}).annotations({ identifier: "FilterCreate" });
export const FilterUpdate = Schema.Struct({
  id: Schema.optional(Id),
  enabled: Schema.optional(Schema.Boolean),
  type: Schema.optional(FilterKind),
  target: Schema.optional(FilterTarget),
  change_to: Schema.optional(FilterChange),
}).annotations({ identifier: "FilterUpdate" });

// ---- deferred upload ----

export const Priority = Schema.Literal("higher_than_realtime", "same_as_realtime", "lower_than_realtime");
export const StorageCapacity = Schema.Int.pipe(Schema.between(1, Number.MAX_SAFE_INTEGER)).annotations({
  format: "int64",
  description: "an integer from 1 to 9007199254740991 (MiB)",
});
export const DeferredUploadSettings = Schema.Struct({
  priority: Priority,
  limit_data_storage: Schema.Boolean,
  data_storage_capacity: StorageCapacity,
}).annotations({ identifier: "DeferredUploadSettings" });
export type DeferredUploadSettings = typeof DeferredUploadSettings.Type;
export const DeferredUploadUpdate = Schema.partialWith(DeferredUploadSettings, { exact: true }).annotations({
  identifier: "DeferredUploadSettingsUpdate",
});
export const defaultDeferredUpload = (): DeferredUploadSettings => ({
  priority: "same_as_realtime",
  limit_data_storage: true,
  data_storage_capacity: 102400,
});

// ---- states, measurements, version ----

export const StateCode = Schema.Literal("none", "connected", "quiet", "disconnected", "error");
export type StateCode = typeof StateCode.Type;
const stateFields = {
  code: StateCode,
  error: Schema.String,
  update_time: Schema.String.annotations({ format: "date-time" }),
};
const Bitrate = Schema.Int.annotations({ description: "bits per second over the last second" });
export const StreamState = Schema.Struct({
  id: Id,
  enabled: Schema.Boolean,
  ...stateFields,
  bitrate: Bitrate,
}).annotations({
  identifier: "StreamState",
});
export type StreamState = typeof StreamState.Type;
export const IpcState = Schema.Struct({ id: Id, enabled: Schema.Boolean, ...stateFields }).annotations({
  identifier: "IpcState",
});
export type IpcState = typeof IpcState.Type;
export const DeferredUploadState = Schema.Struct({ ...stateFields, bitrate: Bitrate }).annotations({
  identifier: "DeferredUploadState",
});
export type DeferredUploadState = typeof DeferredUploadState.Type;

export const Measurement = Schema.Struct({
  uuid: Uuid,
  base_time: Schema.String.annotations({ format: "date-time", description: "RFC 3339 with nanoseconds" }),
  pending_data_size: Schema.Int.annotations({ description: "bytes waiting for deferred upload" }),
  chunk_count: Schema.Int.annotations({ description: "chunks waiting for deferred upload" }),
}).annotations({ identifier: "Measurement" });
export type Measurement = typeof Measurement.Type;

export const Version = Schema.Struct({ version: Schema.String }).annotations({ identifier: "Version" });
export { API_VERSION } from "../api/version.js";

export const ErrorBody = Schema.Struct({
  title: Schema.String,
  status: Schema.Int,
  detail: Schema.String,
  instance: Schema.String,
}).annotations({ identifier: "Error" });

export const listOf = <A, I>(item: Schema.Schema<A, I>) => Schema.Struct({ items: Schema.Array(item) });
