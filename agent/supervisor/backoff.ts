// Exponential backoff with jitter, for engine restarts and for the agent's calls to the control plane.

export type Backoff = { baseMs: number; maxMs: number };

/**
 * The delay before attempt `n` (1 = the first retry): base × 2^(n-1), capped, then scaled by a random factor in
 * [0.5, 1) so that many agents failing together do not retry together.
 */
export function backoffMs(n: number, b: Backoff, random: () => number = Math.random): number {
  const exp = Math.min(b.maxMs, b.baseMs * 2 ** Math.max(0, n - 1));
  return Math.round(exp * (0.5 + random() / 2));
}
