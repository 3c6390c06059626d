// Which measurement records the queue forgets. A record is kept per measurement taken, with its sequences'
// records; without a bound they pile up for as long as the device runs (and every list, completion check and
// start reads them all). A measurement is finished once it has ended, the cloud owes it nothing (no completion
// to report), every sequence is closed and none of its chunks is left: the queue holds nothing of it but the
// record. The newest finished ones stay listed (`agentctl measurement` shows what was taken lately); older
// ones are forgotten.
import type { MeasState, SeqState } from "./chunk-ledger.js";

/** Finished measurements kept listed, newest first. */
export const KEEP_FINISHED = 100;

/** The finished measurements beyond the newest `keep`, oldest first: the ones to forget. */
export function finishedBeyond(
  measurements: Iterable<MeasState>,
  sequences: Iterable<SeqState>,
  keep: number,
): string[] {
  const open = new Set<string>();
  for (const s of sequences) if (!s.rec.closed) open.add(s.rec.measUuid);
  const finished = [...measurements]
    .filter(({ rec, c }) => rec.ended && rec.owesCompletion !== true && c.chunks === 0 && !open.has(rec.uuid))
    .sort((a, b) => a.rec.ord - b.rec.ord);
  return finished.slice(0, Math.max(0, finished.length - keep)).map((m) => m.rec.uuid);
}
