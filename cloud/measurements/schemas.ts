// Request and response schemas of the measurement routes (the intdash REST API v2.6 models).
import * as ParseResult from "effect/ParseResult";
import * as Schema from "effect/Schema";
import { BoolFromQuery, IntFromQuery, StringArrayQuery } from "../http/query.js";
import { BASETIME_TYPES } from "./service/model.js";
import { parseTimeNs } from "./formats/time.js";
import { dataIdFilterProblem } from "./service/data-id-filter.js";

export const Uuid = Schema.String.pipe(
  Schema.pattern(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, {
    message: () => "expected a UUID",
  }),
);

/** RFC 3339 with up to nanoseconds (or deprecated integer Unix microseconds), decoded to epoch ns. */
export const TimeNs = Schema.transformOrFail(Schema.String, Schema.BigIntFromSelf, {
  strict: true,
  decode: (s, _, ast) => {
    const ns = parseTimeNs(s);
    return ns === undefined
      ? ParseResult.fail(
          new ParseResult.Type(
            ast,
            s,
            "expected an RFC 3339 date-time (or integer Unix microseconds) from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z",
          ),
        )
      : ParseResult.succeed(ns);
  },
  encode: (ns) => ParseResult.succeed(ns.toString()),
}).annotations({ jsonSchema: { type: "string", format: "date-time" } });

export const BaseTimeType = Schema.Literal(...BASETIME_TYPES, "undefined");
const Uint = Schema.Int.pipe(Schema.between(0, Number.MAX_SAFE_INTEGER));
const Uint32 = Schema.Int.pipe(Schema.between(0, 0xffffffff));
const Priority = Schema.Int.pipe(Schema.between(0, 0xffffffff));
const Text = Schema.String.pipe(Schema.maxLength(4096));

export const MeasParams = { measurement_uuid: Uuid };
export const SeqParams = { measurement_uuid: Uuid, sequences_uuid: Uuid };
export const BaseTimeParams = { measurement_uuid: Uuid, type: Schema.String.pipe(Schema.maxLength(64)) };

/**
 * Fields of the read model a client sends back when it creates from what it read (the intdash SDK's
 * import lesson passes an exported measurement, base time or marker whole): accepted and ignored.
 */
export function readOnlyFields<const K extends string>(
  ...names: K[]
): { [P in K]: Schema.optional<typeof Schema.Unknown> } {
  const ignored = Schema.optional(Schema.Unknown.annotations({ description: "read-only field of the model: ignored" }));
  return Object.fromEntries(names.map((n) => [n, ignored])) as { [P in K]: typeof ignored };
}

export const MeasCreate = Schema.Struct({
  name: Schema.optional(Text),
  description: Schema.optional(Text),
  basetime: TimeNs,
  basetime_type: BaseTimeType,
  basetime_priority: Schema.optional(Priority),
  basetime_name: Schema.optional(Text),
  basetime_elapsed_time: Schema.optional(Uint),
  edge_uuid: Uuid,
  protected: Schema.optional(Schema.Boolean),
  ...readOnlyFields(
    "uuid",
    "duration",
    "sequences",
    "markers",
    "created_at",
    "updated_at",
    "processed_ratio",
    "ended",
    "status",
    "received_data_points",
    "max_priority_basetime_id",
    "max_elapsed_time",
    "completed",
  ),
});

export const ReplaceMeas = Schema.Struct({
  name: Schema.optional(Text),
  description: Schema.optional(Text),
  basetime_type: Schema.optional(BaseTimeType),
});

export const SequenceReplace = Schema.Struct({
  expected_data_points: Schema.optional(Uint),
  final_sequence_number: Schema.optional(Uint32),
});

export const CreateMeasBaseTime = Schema.Struct({
  basetime: TimeNs,
  priority: Priority,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  elapsed_time: Uint,
  ...readOnlyFields("id", "type", "created_at", "updated_at"),
});

export const UpdateMeasBaseTime = Schema.Struct({
  basetime: Schema.optional(TimeNs),
  priority: Schema.optional(Priority),
  name: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256))),
  elapsed_time: Schema.optional(Uint),
});

// ---- measurement markers (intdash MeasurementMarker*, elapsed times in µs after the base time) ----

export const MarkerParams = { measurement_uuid: Uuid, measurement_marker_uuid: Uuid };
export const MarkerUuidParams = { measurement_marker_uuid: Uuid };
const ElapsedUs = Schema.Int.pipe(Schema.between(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));

/** POST and PUT share it; what POST requires (type, detail) is checked by the service. */
export const MarkerBody = Schema.Struct({
  name: Schema.optional(Text),
  description: Schema.optional(Text),
  type: Schema.optional(Schema.Literal("point", "range")),
  tag: Schema.optional(
    Schema.Record({
      key: Schema.String.pipe(Schema.maxLength(256)),
      value: Schema.String.pipe(Schema.maxLength(4096)),
    }).annotations({
      description: "string keys and string values, not nested",
    }),
  ),
  detail: Schema.optional(
    Schema.Struct({
      occurred_elapsed_time: Schema.optional(ElapsedUs),
      start_elapsed_time: Schema.optional(ElapsedUs),
      end_elapsed_time: Schema.optional(ElapsedUs),
    }).annotations({
      description:
        "point: occurred_elapsed_time; range: start_elapsed_time and end_elapsed_time (µs after the base time)",
    }),
  ),
  ...readOnlyFields("uuid", "created_at", "created_by", "updated_at", "updated_by"),
});

export const MarkerResponse = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  description: Schema.String,
  type: Schema.Literal("point", "range"),
  detail: Schema.Struct({
    occurred_elapsed_time: Schema.optional(Schema.Number),
    start_elapsed_time: Schema.optional(Schema.Number),
    end_elapsed_time: Schema.optional(Schema.Number),
  }),
  tag: Schema.Record({ key: Schema.String, value: Schema.String }),
  created_at: Schema.String,
  created_by: Schema.String,
  updated_at: Schema.String,
  updated_by: Schema.String,
});

export const ProjectMarkersQuery = Schema.Struct({
  uuid: Schema.optional(Schema.String.annotations({ description: "repeatable" })),
  name: Schema.optional(Schema.String.annotations({ description: "repeatable; exact names" })),
  start_unix_micro: Schema.optional(Schema.NumberFromString.pipe(Schema.int())),
  end_unix_micro: Schema.optional(Schema.NumberFromString.pipe(Schema.int())),
  limit: Schema.optional(IntFromQuery(0, 100_000)),
  page: Schema.optional(IntFromQuery(1)),
  sort: Schema.optional(Schema.Literal("name", "base_time", "created_at", "updated_at")),
  order: Schema.optional(Schema.Literal("asc", "desc")),
});

const Order = Schema.optional(Schema.Literal("asc", "desc"));
const TimeQuery = Schema.optional(TimeNs);

export const ListMeasurementsQuery = Schema.Struct({
  "uuid[]": StringArrayQuery,
  name: Schema.optional(Text),
  edge_uuid: Schema.optional(Uuid),
  start: TimeQuery,
  end: TimeQuery,
  partial_match: Schema.optionalWith(BoolFromQuery, { default: () => false }),
  basetime_type: Schema.optional(BaseTimeType),
  ended: Schema.optional(BoolFromQuery),
  since: TimeQuery,
  duration_start: Schema.optional(IntFromQuery(0)),
  duration_end: Schema.optional(IntFromQuery(0)),
  "status[]": Schema.optional(Schema.Array(Schema.Literal("measuring", "resending", "finished"))),
  limit: Schema.optionalWith(IntFromQuery(0, 100_000), { default: () => 0 }),
  sort: Schema.optionalWith(
    Schema.Literal(
      "name",
      "description",
      "ended",
      "duration",
      "base_time",
      "processed_ratio",
      "created_at",
      "updated_at",
    ),
    { default: () => "base_time" as const },
  ),
  page: Schema.optionalWith(IntFromQuery(1), { default: () => 1 }),
  order: Order,
});

/** `data_id_filter` entries (`<data_type>:<data_name>`, iSCP wildcards), each checked before any data is read. */
const DataIdFilter = Schema.optional(
  Schema.Array(
    Schema.String.pipe(
      Schema.maxLength(1024),
      Schema.filter((e) => dataIdFilterProblem(e) ?? true),
    ),
  ).annotations({
    description:
      "<data_type>:<data_name>; `#` (a whole last level) matches the rest, `+` one level, `*` any characters within a level",
  }),
);

export const DataQuery = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  "idq[]": StringArrayQuery,
  data_id_filter: DataIdFilter,
  "data_id_filter[]": DataIdFilter,
  start: TimeQuery,
  end: TimeQuery,
  since: TimeQuery,
  exit_on_error: Schema.optionalWith(BoolFromQuery, { default: () => false }),
  limit: Schema.optional(IntFromQuery(0)),
  order: Order,
  time_format: Schema.optionalWith(Schema.Literal("ns", "us", "ms", "s", "rfc3339"), { default: () => "us" as const }),
});

export const DataIdsQuery = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  start: TimeQuery,
  end: TimeQuery,
});

// ---- responses (documentation; handlers build these shapes in model.ts) ----

export const MeasurementResponse = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  description: Schema.String,
  basetime: Schema.String,
  basetime_type: Schema.String,
  max_priority_basetime_id: Schema.optional(Schema.Int),
  edge_uuid: Schema.String,
  duration: Schema.Number,
  max_elapsed_time: Schema.Number,
  completed: Schema.Boolean,
  protected: Schema.Boolean,
  sequences: Schema.Struct({
    received_chunks_ratio: Schema.Number,
    received_data_points: Schema.Number,
    expected_data_points: Schema.optional(Schema.Number),
    status: Schema.Literal("ready", "measuring", "resending", "finished", "completed"),
  }),
  markers: Schema.Array(Schema.Unknown),
  created_at: Schema.String,
  updated_at: Schema.String,
  processed_ratio: Schema.Number,
  ended: Schema.Boolean,
  status: Schema.Literal("measuring", "resending", "finished"),
  received_data_points: Schema.Number,
});

export const MeasurementsResponse = Schema.Struct({
  items: Schema.Array(MeasurementResponse),
  page: Schema.Struct({
    total_count: Schema.Int,
    first: Schema.Boolean,
    last: Schema.Boolean,
    next: Schema.String,
    previous: Schema.String,
  }),
});

export const SequenceResponse = Schema.Struct({
  uuid: Schema.String,
  expected_data_points: Schema.optional(Schema.Number),
  received_data_points: Schema.Number,
  received_chunks_count: Schema.Number,
  final_sequence_number: Schema.optional(Schema.Number),
  created_at: Schema.String,
  updated_at: Schema.String,
});

export const SequencesResponse = Schema.Struct({
  items: Schema.Array(SequenceResponse),
  page: Schema.Struct({ total_count: Schema.Int }),
});

export const BaseTimeResponse = Schema.Struct({
  id: Schema.Int,
  type: Schema.String,
  basetime: Schema.String,
  priority: Schema.Int,
  name: Schema.String,
  elapsed_time: Schema.Number,
  created_at: Schema.String,
  updated_at: Schema.String,
});

export const ChunksResult = Schema.Struct({
  items: Schema.Array(Schema.Struct({ sequence_number: Schema.Int, result: Schema.Literal("ok", "skipped") })),
  total_count: Schema.Int,
});

export const SequenceSummary = Schema.Struct({ status: Schema.String });

/** A JSON pointer (RFC 6901): "" or `/`-separated tokens, `~` only as `~0` (~) or `~1` (/). */
export const JsonPointer = Schema.String.pipe(
  Schema.maxLength(256),
  Schema.pattern(/^(\/([^~/]|~[01])*)*$/, {
    message: () => "must be a JSON pointer such as /a/b (RFC 6901: ~0 for ~, ~1 for /)",
  }),
).annotations({
  description:
    "JSON pointer (RFC 6901) of a numeric field in json payloads (or string payloads holding JSON), e.g. /a/b or /list/0",
});

/** The reduced series (min/max per time bucket) of one data ID, for plots. */
export const SeriesQuery = Schema.Struct({
  data_type: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  data_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  field: Schema.optional(JsonPointer),
  start: TimeQuery,
  end: TimeQuery,
  buckets: Schema.optionalWith(IntFromQuery(1, 10_000), { default: () => 1000 }),
});

const Numbers = Schema.Array(Schema.Number);
export const SeriesResponse = Schema.Struct({
  measurement_uuid: Schema.String,
  data_type: Schema.String,
  data_id: Schema.String,
  basetime: Schema.String,
  start: Schema.String,
  end: Schema.String,
  bucket_count: Schema.Int,
  point_count: Schema.Int,
  skipped_count: Schema.Int,
  buckets: Schema.Struct({
    time_min: Numbers,
    min: Numbers,
    time_max: Numbers,
    max: Numbers,
    count: Numbers,
  }).annotations({
    description: "Columns, one entry per non-empty bucket in time order; times are seconds since the base time",
  }),
});
