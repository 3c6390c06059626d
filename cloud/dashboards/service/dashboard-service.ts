// svc.dashboards: a project's saved dashboards (panels sharing one time range and cursor), the dashboard each
// edge's measurements open on, and the display names and units of an edge's series.
import crypto from "node:crypto";
import { NotFound } from "../../errors.js";
import { pageInfo } from "../../http/query.js";
import type { Db } from "../../database/db.js";
import * as dashboards from "../repo/dashboards.js";
import * as labels from "../repo/series-labels.js";
import type { DashboardRow } from "../repo/dashboards.js";
import type { SeriesLabelRow } from "../repo/series-labels.js";
import type { Panel } from "../schemas.js";

export interface DashboardInput {
  name?: string;
  panels?: readonly Panel[];
  default_edge_uuids?: readonly string[];
}

export interface SeriesLabelInput {
  edge_uuid: string;
  data_type: string;
  data_id: string;
  field?: string;
  display_name: string;
  unit: string;
}

const notFound = () => new NotFound("dashboard not found");
const lower = (uuids: readonly string[] | undefined) =>
  uuids === undefined ? undefined : [...new Set(uuids.map((u) => u.toLowerCase()))];

function render(r: DashboardRow, defaults: Array<{ edge_uuid: string; dashboard_uuid: string }>) {
  return {
    uuid: r.uuid,
    name: r.name,
    panels: JSON.parse(r.panels) as Panel[],
    default_edge_uuids: defaults.filter((d) => d.dashboard_uuid === r.uuid).map((d) => d.edge_uuid),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

const renderLabel = (r: SeriesLabelRow) => ({
  edge_uuid: r.edge_uuid,
  data_type: r.data_type,
  data_id: r.data_id,
  ...(r.field ? { field: r.field } : {}),
  display_name: r.display_name,
  unit: r.unit,
});

export class DashboardService {
  constructor(private readonly db: Db) {}

  private async require(project: string, uuid: string): Promise<DashboardRow> {
    const d = await dashboards.findDashboard(this.db, project, uuid.toLowerCase());
    if (!d) throw notFound();
    return d;
  }

  private async rendered(project: string, row: DashboardRow) {
    return render(row, await dashboards.defaultsOf(this.db, project));
  }

  async create(project: string, input: Required<Pick<DashboardInput, "name" | "panels">> & DashboardInput, by: string) {
    const now = new Date().toISOString();
    const row: DashboardRow = {
      uuid: crypto.randomUUID(),
      project_uuid: project,
      name: input.name,
      panels: JSON.stringify(input.panels),
      created_by: by,
      created_at: now,
      updated_at: now,
    };
    await this.db.transaction(async (tx) => {
      await dashboards.insertDashboard(tx, row);
      const edges = lower(input.default_edge_uuids);
      if (edges) await dashboards.setDefaults(tx, project, row.uuid, edges);
    });
    return this.rendered(project, row);
  }

  async list(project: string, page: number, perPage: number) {
    const total = await dashboards.countDashboards(this.db, project);
    const rows = await dashboards.pageOfDashboards(this.db, project, perPage, (page - 1) * perPage);
    const defaults = await dashboards.defaultsOf(this.db, project);
    return { items: rows.map((r) => render(r, defaults)), page: pageInfo(total, page, perPage) };
  }

  async get(project: string, uuid: string) {
    return this.rendered(project, await this.require(project, uuid));
  }

  async update(project: string, uuid: string, input: DashboardInput) {
    const before = await this.require(project, uuid);
    const row = {
      uuid: before.uuid,
      name: input.name ?? before.name,
      panels: input.panels ? JSON.stringify(input.panels) : before.panels,
      updated_at: new Date().toISOString(),
    };
    await this.db.transaction(async (tx) => {
      await dashboards.updateDashboard(tx, row);
      const edges = lower(input.default_edge_uuids);
      if (edges) await dashboards.setDefaults(tx, project, row.uuid, edges);
    });
    return this.rendered(project, { ...before, ...row });
  }

  async remove(project: string, uuid: string): Promise<void> {
    const d = await this.require(project, uuid);
    await this.db.transaction((tx) => dashboards.deleteDashboard(tx, project, d.uuid));
  }

  async seriesLabels(project: string, edge: string) {
    return { items: (await labels.labelsOf(this.db, project, edge.toLowerCase())).map(renderLabel) };
  }

  async putSeriesLabel(project: string, input: SeriesLabelInput) {
    const row: SeriesLabelRow = {
      project_uuid: project,
      edge_uuid: input.edge_uuid.toLowerCase(),
      data_type: input.data_type,
      data_id: input.data_id,
      field: input.field ?? "",
      display_name: input.display_name.trim(),
      unit: input.unit.trim(),
      updated_at: new Date().toISOString(),
    };
    await this.db.transaction((tx) => labels.putLabel(tx, row));
    return renderLabel(row);
  }
}

declare module "../../services.js" {
  interface Services {
    dashboards: DashboardService;
  }
}
