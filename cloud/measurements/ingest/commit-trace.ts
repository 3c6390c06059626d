// `--commit-trace FILE`: one line per durable batch of real-time (iSCP) chunks (committed to cloud.db, or held by
// the ingest journal, whose chunks are acknowledged then), "<CLOCK_MONOTONIC ns> <points>",
// appended to FILE. For timing a run from outside the process (edge-agent bench): a client on the same machine
// compares the commit times with its own monotonic clock. Off unless configured.
import fs from "node:fs";

export interface CommitTrace {
  /** `points` data points of real-time chunks have just committed. */
  committed(points: number): void;
  close(): Promise<void>;
}

/** Opens (appends to) the trace file; fails at start when it cannot be written. */
export async function openCommitTrace(file: string): Promise<CommitTrace> {
  const fd = await fs.promises.open(file, "a");
  const out = fd.createWriteStream();
  // A write that fails (a full disk) ends the trace, never the peer: a stream's unheard error would end the process.
  let failed = false;
  out.on("error", () => void (failed = true));
  return {
    committed(points) {
      if (!failed) out.write(`${process.hrtime.bigint()} ${points}\n`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (failed || out.destroyed) return resolve();
        out.once("error", () => resolve());
        out.end(resolve);
      }),
  };
}
