// An edge's schedule in the fleet benches: point k is due at k / rate seconds after the schedule's start, and a
// flush sends every point due by then, as an agent's flush sends what its connector wrote since the last one.

/** How many points (0 .. n-1) are due `elapsedNs` after the start at `rate` points/s: point k once k / rate has passed. */
export const pointsDue = (elapsedNs: number, rate: number): number =>
  elapsedNs < 0 ? 0 : Math.floor((elapsedNs / 1e9) * rate) + 1;
