// A deployment whose replicas keep failing past their restart limit (docs/architecture.md, placement rule 6): the
// first failure is re-placed at once (on another node where one fits), each one after that waits twice as long, and
// the deployment's phase is Failed until one of its replicas is ready. Pure: apply.ts reads and writes the row.
import type { Failing } from "../../shared/schemas/failure.js";

/** How long a deployment waits after its second failure in a row, and at most. */
export const FAILING_BACKOFF = { firstMs: 60_000, maxMs: 30 * 60_000 };

/** From this many failures in a row the deployment's phase is Failed. */
export const FAILED_AFTER = 2;

/** The deployment's record after one more replica failed past its restart limit with `reason`. */
export function nextFailing(prev: Failing | null | undefined, reason: string, now: number): Failing {
  const count = (prev?.count ?? 0) + 1;
  const waitMs = count < FAILED_AFTER ? 0 : Math.min(FAILING_BACKOFF.maxMs, FAILING_BACKOFF.firstMs * 2 ** (count - 2));
  return { count, reason, since: prev?.since ?? now, retryAt: now + waitMs };
}

/** True while new replicas of the deployment must wait. */
export const holdsBack = (f: Failing | null | undefined, now: number): boolean => !!f && f.retryAt > now;

/** A clock time as every view shows it: `14:05:09 UTC`. */
export function utcTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}

/** Why a deployment's replicas are not placed now: how often it failed, the last failure, the next try. */
export function failingReason(f: Failing): string {
  return `failed ${f.count} time${f.count === 1 ? "" : "s"} in a row past the restart limit (last: ${f.reason}); next try at ${utcTime(f.retryAt)}`;
}
