// Placement as the request paths and the liveness sweep run it, timed for llmgw_placement_duration_seconds.
import type { AppDeps } from "../deps.js";
import { placeIfNeeded, type PlaceResult } from "../placement/apply.js";

/** placeIfNeeded(), telling `observePlacement` how long it took when it ran (an unchanged cluster is not a run). */
export async function placeTimed(deps: Pick<AppDeps, "store" | "settings" | "factsCache" | "observePlacement">, now: number): Promise<PlaceResult> {
  const started = performance.now();
  const placed = await placeIfNeeded(deps.store, now, deps.settings, deps.factsCache);
  if (placed.ran) deps.observePlacement?.((performance.now() - started) / 1000);
  return placed;
}

type WakeDeps = Pick<AppDeps, "store" | "settings" | "factsCache" | "observePlacement" | "waiter" | "log" | "now">;

/** Places now and wakes the long-polls of nodes whose shards changed; a failure is logged (the next poll retries it). */
export function placeAndWake(deps: WakeDeps, after: string): Promise<void> {
  return placeTimed(deps, deps.now())
    .then((r) => (r.changedNodes.length ? deps.waiter.notify() : undefined))
    .catch((e: unknown) => deps.log.warn(`placement after ${after} failed; the next poll retries it`, { error: String(e) }));
}
