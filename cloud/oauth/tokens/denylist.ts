// The jti denylist that makes access-token revocation effective before expiry. Checked in memory on
// every bearer request; persisted so it survives a restart, and polled so that several peers sharing
// one database see each other's revocations within DENYLIST_POLL_MS; with --nats a notice tells them at once.
import type { Db } from "../../database/db.js";
import { revokedRepo } from "../repo/revoked.js";

export const DENYLIST_POLL_MS = 2_000;

export class Denylist {
  private readonly jtis = new Map<string, number>();
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `onAdded` tells the other peers (cluster notice) once the entries are committed. */
  constructor(
    private readonly db: Db,
    private readonly onAdded: (entries: Array<{ jti: string; expiresAt: number }>) => void = () => {},
  ) {}

  async load(): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    await revokedRepo.purgeExpired(this.db, now);
    await this.poll();
  }

  has(jti: string): boolean {
    return this.jtis.has(jti);
  }

  async add(entries: Array<{ jti: string; expiresAt: number }>): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    const live = entries.filter((e) => e.expiresAt > now);
    for (const e of live) this.jtis.set(e.jti, e.expiresAt);
    if (!live.length) return;
    await revokedRepo.add(this.db, live);
    this.onAdded(live);
  }

  /** Entries another peer committed (its notice): denied here too, without a write. */
  remember(entries: Array<{ jti: string; expiresAt: number }>): void {
    const now = Math.floor(Date.now() / 1000);
    for (const e of entries)
      if (typeof e.jti === "string" && typeof e.expiresAt === "number" && e.expiresAt > now)
        this.jtis.set(e.jti, e.expiresAt);
  }

  async poll(): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    for (const row of await revokedRepo.since(this.db, this.seq, now)) {
      this.jtis.set(row.jti, row.expires_at);
      this.seq = Math.max(this.seq, row.seq);
    }
    for (const [jti, exp] of this.jtis) if (exp <= now) this.jtis.delete(jti);
  }

  start(onError: (err: unknown) => void): void {
    this.timer = setInterval(() => this.poll().catch(onError), DENYLIST_POLL_MS);
    this.timer.unref();
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
