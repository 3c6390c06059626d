// SQL of the resumable-upstream table (migrations.ts): written when an upstream opens, learns a data-id
// alias, is taken over or ends; never per chunk (what was stored is the chunk table's own business).
import type { Db, Queryable } from "../../database/db.js";

export interface UpstreamRow {
  stream_id: string;
  project_uuid: string;
  node_id: string;
  subject_kind: string;
  subject_uuid: string;
  session_id: string;
  qos: number;
  persist: number | boolean;
  ack_interval_ms: number;
  expiry_ms: number;
  stream_alias: number;
  peer_id: string;
  seen_at_ms: number;
}
export interface AliasRow {
  alias: number;
  name: string;
  type: string;
}

const ALIASES_PER_STATEMENT = 200;

async function insertAliases(q: Queryable, streamId: string, aliases: readonly AliasRow[]): Promise<void> {
  for (let i = 0; i < aliases.length; i += ALIASES_PER_STATEMENT) {
    const part = aliases.slice(i, i + ALIASES_PER_STATEMENT);
    await q.run(
      `INSERT OR IGNORE INTO iscp_upstream_aliases (stream_id, alias, name, type) VALUES ${part.map(() => "(?, ?, ?, ?)").join(", ")}`,
      part.flatMap((a) => [streamId, a.alias, a.name, a.type]),
    );
  }
}

export function insertUpstream(db: Db, row: UpstreamRow, aliases: readonly AliasRow[]): Promise<void> {
  return db.transaction(async (tx) => {
    await tx.run(
      `INSERT INTO iscp_upstreams (stream_id, project_uuid, node_id, subject_kind, subject_uuid, session_id, qos, persist, ack_interval_ms, expiry_ms, stream_alias, peer_id, seen_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.stream_id,
        row.project_uuid,
        row.node_id,
        row.subject_kind,
        row.subject_uuid,
        row.session_id,
        row.qos,
        row.persist ? 1 : 0,
        row.ack_interval_ms,
        row.expiry_ms,
        row.stream_alias,
        row.peer_id,
        row.seen_at_ms,
      ],
    );
    await insertAliases(tx, row.stream_id, aliases);
  });
}

export function addAlias(q: Queryable, streamId: string, alias: AliasRow): Promise<void> {
  return insertAliases(q, streamId, [alias]);
}

export async function findUpstream(
  q: Queryable,
  streamId: string,
): Promise<{ row: UpstreamRow; aliases: AliasRow[] } | undefined> {
  const row = await q.get<UpstreamRow>("SELECT * FROM iscp_upstreams WHERE stream_id = ?", [streamId]);
  if (!row) return undefined;
  const aliases = await q.all<AliasRow>(
    "SELECT alias, name, type FROM iscp_upstream_aliases WHERE stream_id = ? ORDER BY alias",
    [streamId],
  );
  return {
    row: {
      ...row,
      qos: Number(row.qos),
      ack_interval_ms: Number(row.ack_interval_ms),
      expiry_ms: Number(row.expiry_ms),
      stream_alias: Number(row.stream_alias),
      seen_at_ms: Number(row.seen_at_ms),
    },
    aliases: aliases.map((a) => ({ ...a, alias: Number(a.alias) })),
  };
}

/** Moves the stream to `peerId` if `fromPeer` still holds it (two peers racing for one stream: one wins). */
export async function claimUpstream(
  q: Queryable,
  streamId: string,
  fromPeer: string,
  peerId: string,
  nowMs: number,
): Promise<boolean> {
  const r = await q.run("UPDATE iscp_upstreams SET peer_id = ?, seen_at_ms = ? WHERE stream_id = ? AND peer_id = ?", [
    peerId,
    nowMs,
    streamId,
    fromPeer,
  ]);
  return r.changes === 1;
}

export async function deleteUpstream(db: Db, streamId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.run("DELETE FROM iscp_upstream_aliases WHERE stream_id = ?", [streamId]);
    await tx.run("DELETE FROM iscp_upstreams WHERE stream_id = ?", [streamId]);
  });
}

/** The peer's heartbeat: every stream it holds is still held. */
export async function touchPeer(q: Queryable, peerId: string, nowMs: number): Promise<void> {
  await q.run("UPDATE iscp_upstreams SET seen_at_ms = ? WHERE peer_id = ?", [nowMs, peerId]);
}

/** Forgets streams no peer has held for their expiry (plus `slackMs`): their peer died and nobody resumed them. */
export async function deleteStale(db: Db, nowMs: number, slackMs: number): Promise<void> {
  await db.transaction(async (tx) => {
    const cond = "seen_at_ms + expiry_ms + ? < ?";
    await tx.run(
      `DELETE FROM iscp_upstream_aliases WHERE stream_id IN (SELECT stream_id FROM iscp_upstreams WHERE ${cond})`,
      [slackMs, nowMs],
    );
    await tx.run(`DELETE FROM iscp_upstreams WHERE ${cond}`, [slackMs, nowMs]);
  });
}
