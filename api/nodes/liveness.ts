import { and, eq, isNull, lt } from "drizzle-orm";
import type { Store } from "../db/client.js";
import { bumpGeneration } from "../db/cluster.js";
import { insertEvents, pruneEvents } from "../db/events.js";
import { deployments, events, nodes, shards } from "../db/schema.js";

/** Deletes events older than the retention, in a write only when there are some (the sweep runs every few seconds). */
export async function sweepEvents(store: Store, now: number, retentionDays: number): Promise<number> {
  const [old] = await store.db
    .select({ id: events.id })
    .from(events)
    .where(lt(events.at, now - retentionDays * 86_400_000))
    .limit(1);
  return old ? store.write((tx) => pruneEvents(tx, now, retentionDays)) : 0;
}

/**
 * Marks nodes that went silent as lost, once each, with an event, and asks for placement when shards still sit on
 * nodes silent past the repair grace period (placement frees them) or a failing deployment's back-off has passed.
 * Returns the ids newly lost.
 */
export async function sweepLiveness(store: Store, now: number, lostAfterS: number, graceS = 300): Promise<string[]> {
  const cutoff = now - lostAfterS * 1000;
  const stale = and(isNull(nodes.lostAt), lt(nodes.lastSeenAt, cutoff));
  const [stranded] = await store.db
    .select({ id: shards.id })
    .from(shards)
    .innerJoin(nodes, eq(nodes.id, shards.nodeId))
    .where(lt(nodes.lastSeenAt, now - (lostAfterS + graceS) * 1000))
    .limit(1);
  // a deployment held back by its failures is placed again once its back-off has passed
  const due = (await store.db.select({ failing: deployments.failing }).from(deployments)).some(
    (d) => d.failing?.waiting && d.failing.retryAt <= now,
  );
  if (stranded || due) await store.write((tx) => bumpGeneration(tx));
  const candidates = await store.db.select({ id: nodes.id }).from(nodes).where(stale);
  if (!candidates.length) return [];
  return store.write(async (tx) => {
    const lost = await tx
      .update(nodes)
      .set({ lostAt: now })
      .where(stale)
      .returning({ id: nodes.id, lastSeenAt: nodes.lastSeenAt });
    await insertEvents(
      tx,
      now,
      lost.map((n) => ({
        type: "node_lost" as const,
        nodeId: n.id,
        message: `${n.id}: no heartbeat or poll for ${Math.round((now - n.lastSeenAt) / 1000)} s (limit ${lostAfterS} s)`,
      })),
    );
    if (lost.length) await bumpGeneration(tx);
    return lost.map((n) => n.id);
  });
}

/** LLMGW_EVENTS_RETENTION_DAYS when the caller does not say. */
const DEFAULT_RETENTION_DAYS = 90;

/**
 * Runs the sweep (and the events' retention) every `intervalS` until `signal` aborts, then `place` (which does nothing unless the sweep moved the
 * generation): repairs must not wait for a poll, and when every agent is cut off none comes. A failed sweep is
 * logged and retried next time.
 */
export function startLivenessSweep(
  deps: { store: Store; now: () => number; log: { warn(m: string, e?: object): void } },
  opts: { intervalS: number; lostAfterS: number; graceS: number; retentionDays?: number; place?: () => Promise<void> },
  signal: AbortSignal,
) {
  const tick = () =>
    sweepLiveness(deps.store, deps.now(), opts.lostAfterS, opts.graceS)
      .then(() => sweepEvents(deps.store, deps.now(), opts.retentionDays ?? DEFAULT_RETENTION_DAYS))
      .then(
        () => opts.place?.(),
        (e: unknown) => deps.log.warn("liveness sweep failed", { error: String(e) }),
      );
  const timer = setInterval(tick, opts.intervalS * 1000);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  return tick;
}
