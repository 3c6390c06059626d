// The lanes of the group commit (upstream-store.ts): which chunks wait for which commit, and how many commits run
// at once.
import type { Batch } from "./commit-batch.js";

/**
 * Commits in flight at once on PostgreSQL: the measurements are spread over this many lanes (by session id), each
 * lane's commits run one after another, and the lanes' commits run side by side on their own connections. A
 * commit is a few round trips to the database, so one lane alone is bound by their latency, not by either side's
 * CPU. A measurement's chunks are always in one lane, so a stream's chunks still commit in order, and lanes hold
 * disjoint measurements, whose advisory locks never make them wait for each other. SQLite has one writer: one lane.
 */
export const POSTGRES_LANES = 4;

/** A session's lane of `lanes`: the last 32 bits of its UUID (random in v4). */
export const commitLane = (sessionId: string, lanes: number) =>
  lanes === 1 ? 0 : parseInt(sessionId.slice(-8), 16) % lanes;

/** The chunks waiting for their commit in one lane, oldest batch first; the last one takes new chunks until full. */
export interface Lane {
  waiting: Batch[];
  flushing: boolean;
}
