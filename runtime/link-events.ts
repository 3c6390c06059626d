// Counts for the agent's metrics that the lifecycle machines show only as a current state: how often each
// stream's connection to the cloud came back after it was lost, and how often the edge's token was renewed.
// The supervisor feeds it every report and token it sees; nothing here touches the data path.
import type { StateCode } from "./settings/schemas.js";

const UP: ReadonlySet<StateCode> = new Set(["connected", "quiet"]);

export class LinkEvents {
  /** Per stream (`upstreams/<id>`, `downstreams/<id>`): connections back after a loss. */
  readonly reconnects = new Map<string, number>();
  /** Tokens that replaced one the agent held (the first token, and one after a failure, are not renewals). */
  tokenRefreshes = 0;
  /** Per stream: up now, and up before since it was last enabled. */
  private readonly seen = new Map<string, { up: boolean; wasUp: boolean }>();

  /** A stream's state code, as the state API shows it. */
  stream(id: string, code: StateCode): void {
    const s = this.seen.get(id) ?? { up: false, wasUp: false };
    this.seen.set(id, s);
    if (code === "none") {
      // Disabled (or its settings being checked): enabling it again is a new start, not a reconnect.
      s.up = s.wasUp = false;
      return;
    }
    const up = UP.has(code);
    if (up && !s.up && s.wasUp) this.reconnects.set(id, (this.reconnects.get(id) ?? 0) + 1);
    s.up = up;
    s.wasUp ||= up;
    if (!this.reconnects.has(id)) this.reconnects.set(id, 0);
  }

  token(held: string | undefined, next: string | undefined): void {
    if (held !== undefined && next !== undefined && next !== held) this.tokenRefreshes++;
  }
}
