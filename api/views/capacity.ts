// The fleet's capacity: devices by class (total / free / used / unavailable and why) and how many more replicas of
// each model profile fit, and where. GET /api/v1/plan, the console's overview and plan pages and the device gauges of
// /metrics all read it through here, so they show the same figures.
import type { Capacity } from "../../shared/schemas/plan.js";
import type { Q } from "../db/client.js";
import type { AppDeps } from "../deps.js";
import { classCapacity, profileCapacity } from "../placement/capacity.js";
import { planInput } from "../placement/input.js";
import { newPlacementCache, type PlacementCache, readPlacementRows } from "../placement/rows.js";
import type { PlanInput } from "../placement/types.js";

export type PlacementRows = Awaited<ReturnType<typeof readPlacementRows>>;

/** Placement's view of the stored rows as of `now` (no replica is being placed: the next sequence number is 1). */
export function capacityInput(rows: PlacementRows, now: number, lostAfterS: number): PlanInput {
  return planInput({ ...rows, nextSeq: 1, now, lostAfterS });
}

/** The capacity of a fleet placement sees. Pure. */
export function capacityOf(input: PlanInput): Capacity {
  return { classes: classCapacity(input), profiles: profileCapacity(input) };
}

/** Reads the fleet into `cache` and returns its capacity at `now`. */
export async function capacityFrom(db: Q, cache: PlacementCache, now: number, lostAfterS: number): Promise<Capacity> {
  const rows = await readPlacementRows(db, cache, now - lostAfterS * 1000);
  return capacityOf(capacityInput(rows, now, lostAfterS));
}

/** Reads the fleet and returns its capacity now: on the fleet thread where there is one, else here. */
export function readCapacity(
  deps: Pick<AppDeps, "store" | "placementCache" | "settings" | "capacity">,
  now: number,
): Promise<Capacity> {
  const lostAfterS = deps.settings.nodeLostAfterS;
  return (
    deps.capacity?.(now) ?? capacityFrom(deps.store.db, deps.placementCache ?? newPlacementCache(), now, lostAfterS)
  );
}
