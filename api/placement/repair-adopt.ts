// The steps of a placement decision before plan() (decide.ts): replicas freed for repair within the budget, and
// engines no row names adopted — each adding to the decision's writes the events that say what became of them.
import { and, count, eq, gt } from "drizzle-orm";
import { transportReason } from "../../shared/schemas/transport.js";
import type { Q } from "../db/client.js";
import type { NewEvent } from "../db/events.js";
import { events, shardStatus } from "../db/schema.js";
import { adoptOrphans, LIVE_STATES } from "./adopt.js";
import { fitsElsewhere } from "./elsewhere.js";
import { shardKey } from "./input.js";
import { chooseRepairs } from "./repair.js";
import type { PlacementRows } from "./rows.js";
import { policies } from "./serving.js";
import type { PlanInput, Replica } from "./types.js";
import { storeEvents, type Write } from "./writes.js";

/** The settings placement reads (a part of the app's settings). */
export type PlaceSettings = { nodeLostAfterS: number; repairGraceS: number; repairMaxFraction: number };

/**
 * Replicas to free before planning (failed shards, lost nodes), within the repair budget; events (added to `writes`,
 * and returned) say what and why.
 */
export async function repairsIn(
  q: Q,
  writes: Write[],
  input: PlanInput,
  rows: PlacementRows,
  now: number,
  s: PlaceSettings,
) {
  const policy = policies(rows.deployments);
  const [recent] = await q
    .select({ n: count() })
    .from(events)
    .where(and(eq(events.type, "replica_repaired"), gt(events.at, now - 60_000)));
  // only nodes silent past the limit and replicas with a shard failed, degraded or on one of them can need repair:
  // at fleet size the rest (nearly all) are left out rather than copied
  const silentMs = new Map<string, number>();
  // (the few the read found silent, not a look at every node)
  for (const [id, at] of rows.silent) if (now - at > s.nodeLostAfterS * 1000) silentMs.set(id, now - at);
  const stateOfShard = (sh: { nodeId: string; shardId: string }) =>
    rows.stateOf.size ? rows.stateOf.get(shardKey(sh)) : undefined;
  const mayNeedRepair = (x: Replica) =>
    x.shards.some((sh) => {
      if (silentMs.has(sh.nodeId)) return true;
      const st = stateOfShard(sh);
      return st?.state === "failed" || st?.transport?.verdict === "degraded";
    });
  const r = chooseRepairs({
    replicas: input.replicas
      .filter(mayNeedRepair)
      .sort((a, b) => a.seq - b.seq)
      .map((x) => ({
        id: x.id,
        shards: x.shards.map((sh) => {
          const st = stateOfShard(sh);
          const degraded = st?.transport?.verdict === "degraded" && policy.get(x.deployment) !== "prefer";
          return {
            nodeId: sh.nodeId,
            state: st?.state,
            ...(degraded ? { degraded: transportReason(st.transport!) } : {}),
          };
        }),
      })),
    replicaCount: input.replicas.length,
    silentMs,
    nodeCount: rows.nodes.length,
    lostAfterS: s.nodeLostAfterS,
    graceS: s.repairGraceS,
    recentRepairs: recent?.n ?? 0,
    maxFraction: s.repairMaxFraction,
  });
  // a replica freed for its transport only where another set of nodes fits: on the same ones it starts the same way
  // (a map of every replica only when one is released: at fleet size nearly every run releases none)
  const all = new Map(r.release.length ? input.replicas.map((x) => [x.id, x]) : []);
  const byId = (id: string) => all.get(id)!;
  r.release = r.release.filter((x) => !x.transport || fitsElsewhere(input, byId(x.id), x.failedOn ?? []));
  const ev: NewEvent[] = r.release.map((x) => ({
    type: "replica_repaired",
    nodeId: null,
    message: `replica ${x.id} freed for re-placement: ${x.why}`,
    data: { replica: x.id, deployment: byId(x.id).deployment, ...(x.failedOn ? { failedOn: x.failedOn } : {}) },
  }));
  if (r.held) {
    const [told] = await q
      .select({ n: count() })
      .from(events)
      .where(and(eq(events.type, "repair_held"), gt(events.at, now - 300_000)));
    if (!told?.n) ev.push({ type: "repair_held", nodeId: null, message: r.held });
  }
  if (ev.length) writes.push(storeEvents(now, ev));
  return { ...r, events: ev };
}

/**
 * Adopts the engines nodes run that no row names (adopt.ts); every orphan looked at has its spec cleared, so each is
 * decided once, and an event says what became of each live one (both added to `writes`).
 */
export function adoptIn(writes: Write[], input: PlanInput, orphans: PlacementRows["orphans"], now: number) {
  if (!orphans.length) return { adopted: [], nextSeq: input.nextSeq };
  const parsed = orphans.flatMap((o) => (o.spec ? [{ ...o, spec: o.spec }] : []));
  const a = adoptOrphans(input, parsed);
  writes.push(async (tx) => {
    for (const o of orphans)
      await tx
        .update(shardStatus)
        .set({ spec: null })
        .where(and(eq(shardStatus.nodeId, o.nodeId), eq(shardStatus.shardId, o.shardId)));
  });
  const live = new Set(parsed.filter((o) => LIVE_STATES.has(o.state)).map((o) => `${o.nodeId}/${o.shardId}`));
  const ev: NewEvent[] = [
    ...a.adopted.map((r) => ({
      type: "replica_adopted" as const,
      nodeId: r.shards[0]!.nodeId,
      message: `replica ${r.id} of ${r.deployment} adopted from the engine running on ${r.shards[0]!.nodeId}`,
      data: { replica: r.id, deployment: r.deployment },
    })),
    ...a.refused
      .filter((x) => live.has(`${x.nodeId}/${x.shardId}`))
      .map((x) => ({
        type: "shard_not_adopted" as const,
        nodeId: x.nodeId,
        message: `shard ${x.shardId} running on ${x.nodeId} is not adopted (${x.why}); its agent stops it`,
        data: { shard: x.shardId },
      })),
  ];
  if (ev.length) writes.push(storeEvents(now, ev));
  return { adopted: a.adopted, nextSeq: a.nextSeq };
}
