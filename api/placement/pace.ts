// How often placement may run: at most half of the time, beyond an allowance — per instance, from its own runs
// (trigger.ts), and on a libSQL server also across instances, from the last run any of them wrote (the cluster row's
// `placed_at` and `place_ms`), so that several instances together hold the server's write lock no longer.

/** Placement's running time not yet matched by as much idle time, as of `at` (ms). */
export type Owed = { ms: number; at: number };

/** How long a run asked for at `now` waits: until what placement owes is back within the allowance. */
export function waitBefore(owed: Owed, now: number, allowanceMs = 0): number {
  return Math.max(0, owed.ms - (now - owed.at) - allowanceMs);
}

/** What placement owes after a run from `began` to `ended`: the time it ran, on top of what was left unpaid. */
export function owedAfter(owed: Owed, began: number, ended: number): Owed {
  return { ms: Math.max(0, owed.ms - Math.max(0, began - owed.at)) + (ended - began), at: ended };
}

/**
 * How long a run asked for at `now` waits for the cluster's last run, which began at `placedAt` (ms, the clock of the
 * instance that made it) and took `placeMs`: as long idle after it as it ran, beyond the allowance. Never more than
 * twice the run, whatever the instances' clocks say.
 */
export function waitForCluster(last: { placedAt: number; placeMs: number }, now: number, allowanceMs = 0): number {
  const owed = { ms: last.placeMs, at: last.placedAt + last.placeMs };
  return Math.min(2 * last.placeMs, waitBefore(owed, now, allowanceMs));
}
