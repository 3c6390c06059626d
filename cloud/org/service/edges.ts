// Edges: devices that are OAuth2 clients. Their UUID is the client_id; each has one or more named
// client secrets, shown once and stored as SHA-256 digests. Writes keep the org index in step.
import crypto from "node:crypto";
import { Conflict, Invalid, NotFound } from "../../errors.js";
import type { PageInfo } from "../../http/query.js";
import { pageInfo } from "../../http/query.js";
import { generateSecret, hashSecret, verifySecret } from "../../oauth/service/secrets.js";
import { isUniqueViolation, type Db } from "../../database/db.js";
import type { OrgIndex } from "./org-index.js";
import { EdgeRepo, type EdgeFilter, type EdgeRow } from "../repo/edges.js";
import type { Paging, Sort } from "../repo/sql.js";
import type { UserDirectory } from "./users.js";
import { edgeView, secretView } from "./views.js";

export interface EdgeInput {
  name: string;
  nickname?: string;
  description?: string;
}

export type EdgeView = ReturnType<typeof edgeView>;

import { nowIso as now } from "./time.js";
/** last_used_at is written at most this often per secret (a token request must not always write). */
const TOUCH_INTERVAL_MS = 60_000;

export class EdgeService {
  readonly repo: EdgeRepo;
  constructor(
    private readonly db: Db,
    private readonly index: OrgIndex,
    private readonly users: UserDirectory,
    /** Whether something other than an edge (an OAuth2 client) already has this UUID. */
    private readonly clientIdInUse: (uuid: string) => Promise<boolean> = async () => false,
  ) {
    this.repo = new EdgeRepo(db);
  }

  async list(f: EdgeFilter, sort: Sort, paging: Paging): Promise<{ items: EdgeView[]; page: PageInfo }> {
    const { rows, total } = await this.repo.list(f, sort, paging);
    const secrets = await this.repo.secretsOf(rows.map((r) => r.uuid));
    return {
      items: rows.map((r) =>
        edgeView(
          r,
          secrets.filter((s) => s.edge_uuid === r.uuid),
        ),
      ),
      page: pageInfo(total, paging.page, paging.perPage),
    };
  }

  async row(uuid: string, owner?: string): Promise<EdgeRow> {
    const e = await this.repo.get(uuid.toLowerCase());
    if (!e || (owner !== undefined && e.owner_uuid !== owner)) throw new NotFound("edge not found");
    return e;
  }

  async view(e: EdgeRow, clientSecret?: string): Promise<EdgeView> {
    return edgeView(e, await this.repo.secrets(e.uuid), clientSecret);
  }

  async get(uuid: string, owner?: string): Promise<EdgeView> {
    return this.view(await this.row(uuid, owner));
  }

  /** Creates an edge (and its first client secret, returned once as `client_secret`). */
  async create(input: EdgeInput, owner: string | null, uuid?: string): Promise<EdgeView> {
    if (owner && !(await this.users.exists(owner))) throw new NotFound("user not found");
    const at = now();
    const row: EdgeRow = {
      uuid: (uuid ?? crypto.randomUUID()).toLowerCase(),
      name: input.name,
      nickname: input.nickname ?? "",
      description: input.description ?? "",
      owner_uuid: owner,
      created_at: at,
      updated_at: at,
    };
    if (await this.repo.get(row.uuid))
      throw new Conflict("an edge with this UUID already exists", { uuid: "already exists" });
    // A given UUID must not be a user's (subjects are told apart by UUID) or a client_id in use.
    if (uuid !== undefined && ((await this.users.exists(row.uuid)) || (await this.clientIdInUse(row.uuid))))
      throw new Conflict("this UUID is already in use", { uuid: "already exists" });
    const secret = generateSecret();
    try {
      await this.db.transaction(async (tx) => {
        const repo = new EdgeRepo(tx);
        await repo.insert(row);
        await repo.insertSecret({
          edge_uuid: row.uuid,
          name: "default",
          digest: hashSecret(secret),
          hint: "",
          last_used_at: null,
          created_at: at,
        });
      });
    } catch (err) {
      throw this.translate(err);
    }
    this.index.setEdge(row.uuid, owner);
    return this.view(row, secret);
  }

  async update(uuid: string, patch: Partial<EdgeInput>, owner?: string): Promise<EdgeView> {
    const e = await this.row(uuid, owner);
    const next: EdgeRow = {
      ...e,
      name: patch.name ?? e.name,
      nickname: patch.nickname ?? e.nickname,
      description: patch.description ?? e.description,
      updated_at: now(),
    };
    try {
      await this.repo.update(next);
    } catch (err) {
      throw this.translate(err);
    }
    return this.view(next);
  }

  async delete(uuid: string, owner?: string): Promise<void> {
    const e = await this.row(uuid, owner);
    await this.repo.delete(e.uuid);
    this.index.removeEdge(e.uuid);
  }

  /** 409 when the edge already belongs to another user. */
  async assignOwner(uuid: string, user: string): Promise<{ user_uuid: string }> {
    const e = await this.row(uuid);
    const u = user.toLowerCase();
    if (!(await this.users.exists(u)))
      throw new Invalid("invalid body: user_uuid: no such user", { user_uuid: "no such user" });
    if (e.owner_uuid && e.owner_uuid !== u) throw new Conflict("the edge already has an owner");
    if (e.owner_uuid !== u) await this.repo.update({ ...e, owner_uuid: u, updated_at: now() });
    this.index.setEdge(e.uuid, u);
    return { user_uuid: u };
  }

  async removeOwner(uuid: string): Promise<void> {
    const e = await this.row(uuid);
    if (e.owner_uuid) await this.repo.update({ ...e, owner_uuid: null, updated_at: now() });
    this.index.setEdge(e.uuid, null);
  }

  // --- client secrets ---
  async createSecret(uuid: string, name: string, owner?: string) {
    const e = await this.row(uuid, owner);
    const secret = generateSecret();
    const row = {
      edge_uuid: e.uuid,
      name,
      digest: hashSecret(secret),
      hint: "",
      last_used_at: null,
      created_at: now(),
    };
    const id = await this.repo.insertSecret(row);
    return secretView({ id, ...row }, secret);
  }
  async listSecrets(uuid: string, owner?: string) {
    const e = await this.row(uuid, owner);
    const items = (await this.repo.secrets(e.uuid)).map((s) => secretView(s));
    return { items, page: pageInfo(items.length, 1, Math.max(1, items.length)) };
  }
  async deleteSecret(uuid: string, id: number, owner?: string): Promise<void> {
    const e = await this.row(uuid, owner);
    if (!(await this.repo.deleteSecret(e.uuid, id))) throw new NotFound("client secret not found");
  }

  /** Constant-time check of a presented secret against every secret of the edge. */
  async verifySecret(uuid: string, secret: string): Promise<boolean> {
    let match: { id: number; last_used_at: string | null } | undefined;
    for (const s of await this.repo.secrets(uuid)) if (verifySecret(secret, s.digest)) match = s;
    if (!match) return false;
    const last = match.last_used_at ? Date.parse(match.last_used_at) : 0;
    if (Date.now() - last > TOUCH_INTERVAL_MS) await this.repo.touchSecret(match.id, now());
    return true;
  }

  async forgetOwner(user: string): Promise<void> {
    await this.repo.clearOwner(user);
  }

  private translate(err: unknown): unknown {
    if (!isUniqueViolation(err)) return err;
    return /edges\.uuid/.test((err as Error).message)
      ? new Conflict("an edge with this UUID already exists", { uuid: "already exists" })
      : new Conflict("an edge with this name already exists", { name: "already exists" });
  }
}
