// Filter `target` (which points a filter applies to) and `change_to` (what it does to them).
// The spec names the variants but not their fields; the fields are our design (docs/datapath.md).
// Every variant is an object tagged by `type`, so JSON reads as
//   {"type":"name","patterns":["1/#"]} / {"type":"sampling","interval_ms":100}.
import * as Schema from "effect/Schema";
import { dataNameError, patternError } from "./pattern.js";

const Pattern = Schema.String.pipe(
  Schema.filter((s) => patternError(s) ?? true),
  Schema.annotations({
    identifier: "Pattern",
    description: "iSCP pattern: `/` levels, `+` one level, `#` trailing levels",
  }),
);
const Patterns = Schema.Array(Pattern).pipe(Schema.minItems(1), Schema.maxItems(100));

export const DataName = Schema.String.pipe(
  Schema.filter((s) => dataNameError(s) ?? true),
  Schema.annotations({ identifier: "DataName" }),
);

/** Matches every point. */
export const TargetAlways = Schema.Struct({ type: Schema.Literal("always") });
/** Matches points whose data type matches any pattern, e.g. `h264_frame/#`. */
export const TargetType = Schema.Struct({ type: Schema.Literal("type"), patterns: Patterns });
/** Matches points whose data name (after the IPC prefix was added) matches any pattern. */
export const TargetName = Schema.Struct({ type: Schema.Literal("name"), patterns: Patterns });
/**
 * Matches points by source id: upstream, the id of the device-connector IPC the point came from;
 * downstream, the source edge UUID of the point.
 */
export const TargetSrcId = Schema.Struct({ type: Schema.Literal("src-id"), patterns: Patterns });

export const FilterTarget = Schema.Union(TargetAlways, TargetType, TargetName, TargetSrcId).annotations({
  identifier: "FilterTarget",
});
export type FilterTarget = typeof FilterTarget.Type;

/**
 * Renames matching points. `name` replaces the whole data name; `strip_prefix`/`add_prefix`
 * rewrite a prefix (applied strip first, then add); `data_type` replaces the data type.
 * At least one field must be set; the resulting name must follow the data-name rules (checked at runtime,
 * a point whose new name would be invalid keeps its old name and is counted).
 */
export const ChangeRename = Schema.Struct({
  type: Schema.Literal("rename"),
  name: Schema.optional(DataName),
  strip_prefix: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  add_prefix: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  data_type: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(0xffff))),
}).pipe(
  Schema.filter(
    (c) =>
      c.name !== undefined ||
      c.strip_prefix !== undefined ||
      c.add_prefix !== undefined ||
      c.data_type !== undefined ||
      "rename needs at least one of name, strip_prefix, add_prefix, data_type",
  ),
);

/**
 * Time-based sampling: per data id (name + type), keep a point only when its elapsed time is at least
 * `interval_ms` after the last kept point of that data id; others are dropped. The clock is the point's
 * elapsed time (data time, not wall time), so the result is the same however fast points arrive.
 */
export const ChangeSampling = Schema.Struct({
  type: Schema.Literal("sampling"),
  interval_ms: Schema.Number.pipe(Schema.positive(), Schema.lessThanOrEqualTo(86_400_000)),
});

/**
 * Keeps only the H.264 NAL units a decoder needs to start decoding: SPS (7), PPS (8), IDR slices (5),
 * plus SEI (6) and AUD (9) when `keep_sei`/`keep_aud` are true. Payload is Annex-B; a point left with
 * no NAL unit is dropped. See docs/datapath.md.
 */
export const ChangeH264EssentialNalUnits = Schema.Struct({
  type: Schema.Literal("h264-essential-nal-units"),
  keep_sei: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  keep_aud: Schema.optionalWith(Schema.Boolean, { default: () => false }),
});

export const FilterChange = Schema.Union(ChangeRename, ChangeSampling, ChangeH264EssentialNalUnits).annotations({
  identifier: "FilterChange",
});
export type FilterChange = typeof FilterChange.Type;

/** Filter kinds: a filter's `type` names the change it makes and must equal `change_to.type`. */
export const FilterKind = Schema.Literal("rename", "sampling", "h264-essential-nal-units");
export type FilterKind = typeof FilterKind.Type;

export const FilterId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100));

/** A whole filter as stored and as applied by the data path. */
export const FilterDefinition = Schema.Struct({
  id: FilterId,
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  type: FilterKind,
  target: FilterTarget,
  change_to: FilterChange,
}).pipe(
  Schema.filter(
    (f) => f.type === f.change_to.type || `type "${f.type}" does not match change_to.type "${f.change_to.type}"`,
  ),
);
export type FilterDefinition = typeof FilterDefinition.Type;
export type FilterDefinitionEncoded = typeof FilterDefinition.Encoded;

/** For update bodies that may change `type` and `change_to` separately: returns an error or undefined. */
export function filterConsistencyError(type: string, change: FilterChange): string | undefined {
  return type === change.type ? undefined : `type "${type}" does not match change_to.type "${change.type}"`;
}
