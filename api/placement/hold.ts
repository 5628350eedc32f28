// What placement remembers of failed replicas, from the rows: a crash-looping deployment's record (failing.ts) on its
// row — one more failure for each of its replicas repair frees because a shard failed past its restart limit, cleared
// once one of its replicas is ready, an event saying when it is Failed and when it tries next — and the nodes its
// replicas recently failed on (tried last).
import { and, eq, gt } from "drizzle-orm";
import type { Failing } from "../../shared/schemas/failure.js";
import type { Q } from "../db/client.js";
import type { NewEvent } from "../db/events.js";
import { deployments, events } from "../db/schema.js";
import { FAILED_AFTER, failingReason, holdsBack, nextFailing } from "./failing.js";
import { shardKey } from "./input.js";
import type { PlacementRows } from "./rows.js";
import type { PlanInput } from "./types.js";
import { storeEvents, type Write } from "./writes.js";

type Released = { id: string; why?: string; failedOn?: string[]; transport?: boolean };

/**
 * Updates each deployment's failing record (in `writes`) from this run's repairs (`released`, with the replicas as
 * they were) and the replicas still placed (`kept`); returns the deployments whose new replicas must wait now.
 */
export function failingIn(
  writes: Write[],
  rows: PlacementRows,
  before: PlanInput["replicas"],
  kept: PlanInput["replicas"],
  released: readonly Released[],
  now: number,
): Map<string, Failing> {
  const failedBy = new Map<string, string[]>();
  for (const x of released) {
    const r = before.find((b) => b.id === x.id);
    if (!r || !x.failedOn) continue;
    const shard = r.shards.find((s) => x.failedOn!.includes(s.nodeId));
    const why =
      (x.transport && x.why) ||
      (shard && rows.stateOf.get(shardKey(shard))?.message) ||
      "a shard failed past its restart limit";
    failedBy.set(r.deployment, [...(failedBy.get(r.deployment) ?? []), why]);
  }
  const readyIn = new Set(kept.filter((r) => r.ready).map((r) => r.deployment));
  const held = new Map<string, Failing>();
  const ev: NewEvent[] = [];
  for (const d of rows.deployments) {
    let next: Failing | null = readyIn.has(d.name) ? null : (d.failing ?? null);
    for (const why of failedBy.get(d.name) ?? []) next = nextFailing(next, why, now);
    if (next && holdsBack(next, now)) {
      next = { ...next, waiting: true };
      held.set(d.name, next);
    } else if (next?.waiting) next = { ...next, waiting: false };
    if (JSON.stringify(next) === JSON.stringify(d.failing ?? null)) continue;
    writes.push((tx) => tx.update(deployments).set({ failing: next }).where(eq(deployments.name, d.name)));
    if (next && next.count >= FAILED_AFTER && next.count !== d.failing?.count)
      ev.push({
        type: "deployment_failing",
        nodeId: null,
        message: `deployment ${d.name} ${failingReason(next)}`,
        data: { deployment: d.name, count: next.count, retryAt: next.retryAt },
      });
  }
  if (ev.length) writes.push(storeEvents(now, ev));
  return held;
}

/** How long placement keeps a deployment's replicas off a node where one failed past its restart limit, if it can. */
const AVOID_FAILED_NODE_MS = 10 * 60_000;

/**
 * Nodes each deployment's replicas recently failed on (from the repair events, so every instance agrees): those
 * stored, and `also` — this run's, not written yet.
 */
export async function recentFailures(
  q: Q,
  now: number,
  also: readonly NewEvent[] = [],
): Promise<Map<string, string[]>> {
  const stored = await q
    .select({ data: events.data })
    .from(events)
    .where(and(eq(events.type, "replica_repaired"), gt(events.at, now - AVOID_FAILED_NODE_MS)));
  const out = new Map<string, Set<string>>();
  for (const { data } of [...stored, ...also.filter((e) => e.type === "replica_repaired")]) {
    const d = data?.deployment;
    const on = data?.failedOn;
    if (typeof d !== "string" || !Array.isArray(on)) continue;
    const set = out.get(d) ?? new Set<string>();
    for (const n of on) if (typeof n === "string") set.add(n);
    out.set(d, set);
  }
  return new Map([...out].map(([d, set]) => [d, [...set].sort()]));
}
