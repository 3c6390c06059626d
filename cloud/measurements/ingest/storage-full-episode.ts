// A full disk refuses chunks one by one, possibly thousands a second: the operator needs to hear of it at
// once, but once per episode (warn), and once when chunks are stored again (info), not a line per chunk.
import type { Logger } from "pino";

export class StorageFullEpisode {
  /** When the episode began (ms since the epoch); undefined while chunks are stored. */
  private since: number | undefined;
  private refusedChunks = 0;

  constructor(private readonly log: Logger) {}

  get full(): boolean {
    return this.since !== undefined;
  }

  /** A chunk (or base time) was refused because the storage is full. */
  refused(): void {
    this.refusedChunks++;
    if (this.since !== undefined) return;
    this.since = Date.now();
    this.log.warn(
      "storage full: real-time chunks are refused (agents keep them for a later upload) until there is room",
    );
  }

  /** A chunk was stored: an episode under way is over. */
  stored(): void {
    if (this.since === undefined) return;
    this.log.info(
      { refused: this.refusedChunks, fullForMs: Date.now() - this.since },
      "storage has room again: real-time chunks are stored",
    );
    this.since = undefined;
    this.refusedChunks = 0;
  }
}
