// The broker's upstream states (broker/options.ts UpstreamStates) in the peers' shared database, so that an
// upstream opened on one peer can be resumed on another (or on this one after a restart). Written at open,
// at a new data-id alias and at the end; a heartbeat says which peer still holds what, so a stream whose peer
// died stays resumable for its expiry interval after the peer's last heartbeat, as it would have on that peer.
import type { Db } from "../../database/db.js";
import type { Subject, UpstreamInfo, UpstreamSnapshot, UpstreamStates } from "../broker/options.js";
import * as repo from "../repo/upstreams.js";

/** How often a peer says it still holds its streams. */
export const HEARTBEAT_MS = 10_000;

export class SharedUpstreamStates implements UpstreamStates {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    /** This peer among the others (the cluster bus's instance id). */
    private readonly peerId: string,
    private readonly warn: (msg: string, err: unknown) => void,
  ) {}

  opened(s: UpstreamSnapshot): Promise<void> {
    const i = s.info;
    return repo.insertUpstream(
      this.db,
      {
        stream_id: i.streamId,
        project_uuid: i.projectUuid,
        node_id: i.nodeId,
        subject_kind: i.subject.kind,
        subject_uuid: i.subject.uuid,
        session_id: i.sessionId,
        qos: i.qos,
        persist: i.persist,
        ack_interval_ms: s.ackIntervalMs,
        expiry_ms: s.expiryMs,
        stream_alias: s.streamAlias,
        peer_id: this.peerId,
        seen_at_ms: Date.now(),
      },
      s.aliases,
    );
  }

  aliasAdded(streamId: string, alias: { alias: number; name: string; type: string }): Promise<void> {
    return repo.addAlias(this.db, streamId, alias);
  }

  removed(streamId: string): Promise<void> {
    return repo.deleteUpstream(this.db, streamId);
  }

  async takeOver(streamId: string, mine: (info: UpstreamInfo) => boolean): Promise<UpstreamSnapshot | undefined> {
    const found = await repo.findUpstream(this.db, streamId);
    if (!found) return undefined;
    const { row, aliases } = found;
    const info: UpstreamInfo = {
      streamId: row.stream_id,
      sessionId: row.session_id,
      projectUuid: row.project_uuid,
      nodeId: row.node_id,
      subject: { kind: row.subject_kind as Subject["kind"], uuid: row.subject_uuid },
      qos: row.qos,
      persist: Number(row.persist) !== 0,
    };
    if (!mine(info)) return undefined;
    const now = Date.now();
    // Its peer has not said it holds it for longer than the stream's expiry: it expired with that peer.
    if (row.seen_at_ms + row.expiry_ms + HEARTBEAT_MS < now) return undefined;
    if (!(await repo.claimUpstream(this.db, streamId, row.peer_id, this.peerId, now))) return undefined;
    return {
      info,
      ackIntervalMs: row.ack_interval_ms,
      expiryMs: row.expiry_ms,
      streamAlias: row.stream_alias,
      aliases,
    };
  }

  /** Starts the heartbeat, which also forgets the streams of peers gone for longer than the streams' expiry. */
  start(): void {
    this.timer = setInterval(() => {
      const now = Date.now();
      repo
        .touchPeer(this.db, this.peerId, now)
        .then(() => repo.deleteStale(this.db, now, 2 * HEARTBEAT_MS))
        .catch((e: unknown) => this.warn("iscp upstream heartbeat failed", e));
    }, HEARTBEAT_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
