// Request and response schemas of the dashboard routes (the peer's own operations, not in the intdash API).
import * as Schema from "effect/Schema";
import { PageFields, PageInfoSchema } from "../http/query.js";
import { Uuid } from "../measurements/schemas.js";

const DataType = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256));
const DataId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256));
/** A JSON pointer (RFC 6901) of a numeric field of JSON data. */
const Field = Schema.String.pipe(Schema.pattern(/^(\/[^/]*)+$/), Schema.maxLength(256));
const Name = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200));

/** One series of a panel: a data ID, or one field of a JSON data ID. */
export const SeriesRef = Schema.Struct({ data_type: DataType, data_id: DataId, field: Schema.optional(Field) });

export const PANEL_KINDS = ["plot", "map", "table", "log"] as const;

export const Panel = Schema.Struct({
  kind: Schema.Literal(...PANEL_KINDS),
  title: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  series: Schema.Array(SeriesRef).pipe(Schema.maxItems(16)),
  /** Columns of the dashboard's 12-column grid. */
  width: Schema.Int.pipe(Schema.between(3, 12)),
  /** Pixels. */
  height: Schema.Int.pipe(Schema.between(120, 1200)),
});
export type Panel = typeof Panel.Type;

const Panels = Schema.Array(Panel).pipe(Schema.maxItems(32));
const EdgeUuids = Schema.Array(Uuid).pipe(Schema.maxItems(200));

export const DashboardCreateRequest = Schema.Struct({
  name: Name,
  panels: Panels,
  default_edge_uuids: Schema.optional(EdgeUuids),
});
export const DashboardUpdateRequest = Schema.Struct({
  name: Schema.optional(Name),
  panels: Schema.optional(Panels),
  default_edge_uuids: Schema.optional(EdgeUuids),
});

export const ProjectParams = Schema.Struct({ project_uuid: Uuid });
export const DashboardParams = Schema.Struct({ project_uuid: Uuid, dashboard_uuid: Uuid });
export const DashboardsQuery = Schema.Struct(PageFields);

export const Dashboard = Schema.Struct({
  uuid: Schema.String,
  name: Schema.String,
  panels: Schema.Array(Panel),
  /** The edges whose measurements open on this dashboard. */
  default_edge_uuids: Schema.Array(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
});
export const Dashboards = Schema.Struct({ items: Schema.Array(Dashboard), page: PageInfoSchema });

export const SeriesLabelsQuery = Schema.Struct({ edge_uuid: Uuid });
export const SeriesLabelRequest = Schema.Struct({
  edge_uuid: Uuid,
  data_type: DataType,
  data_id: DataId,
  field: Schema.optional(Field),
  display_name: Schema.String.pipe(Schema.maxLength(200)),
  unit: Schema.String.pipe(Schema.maxLength(32)),
});
export const SeriesLabel = Schema.Struct({
  edge_uuid: Schema.String,
  data_type: Schema.String,
  data_id: Schema.String,
  field: Schema.optional(Schema.String),
  display_name: Schema.String,
  unit: Schema.String,
});
export const SeriesLabels = Schema.Struct({ items: Schema.Array(SeriesLabel) });
