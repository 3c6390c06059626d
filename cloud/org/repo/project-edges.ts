// Storage of the edges added to a project (with a per-project nickname).
import type { Queryable } from "../../database/db.js";
import { orderBy, pagedQuery, Where, type Paging, type Sort } from "./sql.js";

export interface ProjectEdgeRow {
  project_uuid: string;
  edge_uuid: string;
  name: string;
  nickname: string;
  created_at: string;
  updated_at: string;
}

const COLS = "pe.project_uuid, pe.edge_uuid, e.name AS name, pe.nickname, pe.created_at, pe.updated_at";
const FROM = "project_edges pe JOIN edges e ON e.uuid = pe.edge_uuid";
const SORT = { nickname: "pe.nickname", created_at: "pe.created_at", updated_at: "pe.updated_at" };

export class ProjectEdgeRepo {
  constructor(private readonly db: Queryable) {}

  list(project: string, edgeUuids: readonly string[] | undefined, sort: Sort, paging: Paging) {
    const w = new Where().add("pe.project_uuid = ?", project).in("pe.edge_uuid", edgeUuids);
    return pagedQuery<ProjectEdgeRow>(this.db, FROM, COLS, w, orderBy(sort, SORT, "pe.edge_uuid"), paging);
  }
  get(project: string, edge: string) {
    return this.db.get<ProjectEdgeRow>(`SELECT ${COLS} FROM ${FROM} WHERE pe.project_uuid = ? AND pe.edge_uuid = ?`, [
      project,
      edge,
    ]);
  }
  nicknameTaken(project: string, nickname: string, exceptEdge?: string) {
    return this.db
      .get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM project_edges WHERE project_uuid = ? AND nickname = ? AND edge_uuid != ?",
        [project, nickname, exceptEdge ?? ""],
      )
      .then((r) => (r?.n ?? 0) > 0);
  }
  async insert(r: Omit<ProjectEdgeRow, "name">) {
    await this.db.run(
      "INSERT INTO project_edges (project_uuid, edge_uuid, nickname, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
      [r.project_uuid, r.edge_uuid, r.nickname, r.created_at, r.updated_at],
    );
  }
  async setNickname(project: string, edge: string, nickname: string, at: string) {
    await this.db.run(
      "UPDATE project_edges SET nickname = ?, updated_at = ? WHERE project_uuid = ? AND edge_uuid = ?",
      [nickname, at, project, edge],
    );
  }
  async delete(project: string, edge: string) {
    return (
      (await this.db.run("DELETE FROM project_edges WHERE project_uuid = ? AND edge_uuid = ?", [project, edge]))
        .changes > 0
    );
  }
}
