// Device-connector IPC settings: `ipc` (where the FIFO is) and `launch` (the connector process the agent
// starts and supervises). The spec says "contents: not shown"; the shapes are ours (docs/datapath.md).
import * as Schema from "effect/Schema";

/** FIFO data formats the agent speaks (spec: `format`). */
export const IpcFormat = Schema.Literal("iscp-v2-compat", "logger-msg");
export type IpcFormat = typeof IpcFormat.Type;

/** `{type: "fifo", path}`: the agent creates the FIFO at `path` (absolute) if it does not exist. */
export const Ipc = Schema.Struct({
  type: Schema.Literal("fifo"),
  path: Schema.String.pipe(
    Schema.minLength(2),
    Schema.maxLength(4096),
    Schema.filter((p) => (p.startsWith("/") && !p.includes("\0")) || "path must be absolute"),
  ),
}).annotations({ identifier: "Ipc" });
export type Ipc = typeof Ipc.Type;

/**
 * When the connector is restarted after it exits:
 * `always` (any exit, including exit code 0), `on-failure` (non-zero exit code or signal), `never`.
 */
export const RestartPolicyKind = Schema.Literal("always", "on-failure", "never");
export type RestartPolicyKind = typeof RestartPolicyKind.Type;

/**
 * Restart with exponential backoff: delay = min(initial_backoff_ms * multiplier^(n-1), max_backoff_ms)
 * for the n-th consecutive restart; a run that lasted `reset_after_ms` resets n to 0.
 * `max_restarts` (0 = unlimited) bounds consecutive restarts; after that the channel shows `error`.
 */
export const RestartPolicy = Schema.Struct({
  policy: Schema.optionalWith(RestartPolicyKind, { default: () => "always" as const }),
  initial_backoff_ms: Schema.optionalWith(Schema.Int.pipe(Schema.between(10, 3_600_000)), { default: () => 500 }),
  max_backoff_ms: Schema.optionalWith(Schema.Int.pipe(Schema.between(10, 3_600_000)), { default: () => 30_000 }),
  multiplier: Schema.optionalWith(Schema.Number.pipe(Schema.between(1, 10)), { default: () => 2 }),
  reset_after_ms: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 86_400_000)), { default: () => 10_000 }),
  max_restarts: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 1_000_000)), { default: () => 0 }),
}).annotations({ identifier: "RestartPolicy" });
export type RestartPolicy = typeof RestartPolicy.Type;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Checked on the whole record: a refined Record key would silently drop non-matching keys instead.
const Environment = Schema.Record({ key: Schema.String, value: Schema.String }).pipe(
  Schema.filter((env) => {
    const bad = Object.keys(env).find((k) => !ENV_NAME.test(k));
    return bad === undefined || `invalid environment variable name "${bad}"`;
  }),
);

/**
 * `launch`: the agent starts `command` (no shell) with `args` and `environment` added to its own
 * environment, after creating the FIFO. In `args`, the text `${ipc.path}` is replaced by the FIFO path;
 * the environment also gets EDGE_AGENT_IPC_PATH and EDGE_AGENT_IPC_FORMAT. On stop the agent sends
 * SIGTERM, then SIGKILL after `stop_timeout_ms`.
 */
export const Launch = Schema.Struct({
  command: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096)),
  args: Schema.optionalWith(Schema.Array(Schema.String.pipe(Schema.maxLength(65536))).pipe(Schema.maxItems(1000)), {
    default: () => [],
  }),
  environment: Schema.optionalWith(Environment, { default: () => ({}) }),
  working_dir: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  restart: Schema.optionalWith(RestartPolicy, { default: () => RestartPolicy.make({}) }),
  stop_timeout_ms: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 600_000)), { default: () => 5_000 }),
}).annotations({ identifier: "Launch" });
export type Launch = typeof Launch.Type;
