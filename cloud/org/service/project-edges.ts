// Edges added to a project, each with a nickname unique inside the project. An edge added to a
// project belongs to it for access decisions (the other way in is through its owner).
import { Conflict, Invalid, NotFound } from "../../errors.js";
import { pageInfo } from "../../http/query.js";
import { reply } from "../../http/route.js";
import type { Db } from "../../database/db.js";
import type { OrgIndex } from "./org-index.js";
import { EdgeRepo } from "../repo/edges.js";
import { ProjectEdgeRepo } from "../repo/project-edges.js";
import type { Paging, Sort } from "../repo/sql.js";
import { projectEdgeView } from "./views.js";

import { nowIso as now } from "./time.js";
const nicknameTaken = () =>
  new Conflict(
    "another edge of this project has this nickname",
    { nickname: "already exists" },
    "conflict_project_edge_nickname",
  );

export class ProjectEdgeService {
  readonly repo: ProjectEdgeRepo;
  private readonly edges: EdgeRepo;
  constructor(
    db: Db,
    private readonly index: OrgIndex,
    private readonly projectExists: (uuid: string) => Promise<unknown>,
  ) {
    this.repo = new ProjectEdgeRepo(db);
    this.edges = new EdgeRepo(db);
  }

  async list(project: string, edgeUuids: readonly string[] | undefined, sort: Sort, paging: Paging) {
    await this.projectExists(project);
    const { rows, total } = await this.repo.list(
      project,
      edgeUuids?.map((u) => u.toLowerCase()),
      sort,
      paging,
    );
    return { items: rows.map(projectEdgeView), page: pageInfo(total, paging.page, paging.perPage) };
  }

  async get(project: string, edge: string) {
    await this.projectExists(project);
    const r = await this.repo.get(project, edge.toLowerCase());
    if (!r) throw new NotFound("the edge is not in this project");
    return projectEdgeView(r);
  }

  async add(project: string, edgeName: string, nickname: string | undefined) {
    await this.projectExists(project);
    const e = await this.edges.getByName(edgeName);
    if (!e) throw new Invalid("invalid body: edge_name: no such edge", { edge_name: "no such edge" });
    if (await this.repo.get(project, e.uuid))
      throw new Conflict("the edge is already in this project", undefined, "conflict_project_edge_uuid");
    const nick = nickname ?? e.nickname ?? e.name;
    const finalNick = nick === "" ? e.name : nick;
    if (await this.repo.nicknameTaken(project, finalNick)) throw nicknameTaken();
    const at = now();
    await this.repo.insert({
      project_uuid: project,
      edge_uuid: e.uuid,
      nickname: finalNick,
      created_at: at,
      updated_at: at,
    });
    this.index.addProjectEdge(project, e.uuid);
    return this.get(project, e.uuid);
  }

  /** 304 when the nickname does not change. */
  async update(project: string, edge: string, nickname: string | undefined) {
    const current = await this.get(project, edge);
    if (nickname === undefined || nickname === current.nickname) return reply(304);
    if (await this.repo.nicknameTaken(project, nickname, current.edge_uuid)) throw nicknameTaken();
    await this.repo.setNickname(project, current.edge_uuid, nickname, now());
    return this.get(project, current.edge_uuid);
  }

  async remove(project: string, edge: string) {
    const current = await this.get(project, edge);
    await this.repo.delete(project, current.edge_uuid);
    this.index.removeProjectEdge(project, current.edge_uuid);
  }
}
