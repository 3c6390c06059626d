// Told about every committed batch of chunks, REST uploads and iSCP upstreams alike: the storage-room
// tracker (a commit shows there is space again) and the metrics count from here, once per batch.

export interface CommitObserver {
  /** `chunks` new chunks holding `points` data points committed; the write took `seconds`. */
  committed(chunks: number, points: number, seconds: number): void;
}
