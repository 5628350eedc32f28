// The one place placement writes to the database: read everything (rows.ts), plan(), write the difference — in one
// write transaction, and only when the cluster generation moved since the last placement.
import { eq, inArray } from "drizzle-orm";
import type { Store, Tx } from "../db/client.js";
import { insertRows } from "../db/insert-rows.js";
import { prepared } from "../db/prepared.js";
import { allocations, cluster, deployments, nodes, portAllocations, replicas, shards } from "../db/schema.js";
import { failingReason } from "./failing.js";
import { failingIn, recentFailures } from "./hold.js";
import { placedReplicas, planInput } from "./input.js";
import { plan } from "./plan.js";
import { adoptIn, type PlaceSettings, repairsIn } from "./repair-adopt.js";
import {
  behind,
  keepPlaced,
  newPlacementCache,
  type PlacementCache,
  readPlacementRows,
  warmPlacementCache,
} from "./rows.js";
import { startShard } from "./start-shard.js";
import type { PlaceDeployment, Replica } from "./types.js";

export type { PlaceSettings } from "./repair-adopt.js";

/** What one placement run decided, for the log: each new replica where it went, each freed one, each new reason. */
export type Decisions = {
  placed: { replicaId: string; deployment: string; fabric: string; shards: string[] }[];
  released: string[];
  pending: { deployment: string; reason: string | null }[];
};
export type PlaceResult = {
  ran: boolean;
  /**
   * The run found the change it set out to place placed already, by another instance (its transaction waited for the
   * write lock while that one held it): that instance's commit may have moved this instance's nodes too.
   */
  elsewhere?: true;
  changedNodes: string[];
  assigned: number;
  released: number;
  decisions?: Decisions;
};
const NOTHING: PlaceResult = { ran: false, changedNodes: [], assigned: 0, released: 0 };

const placedOf = (name: string, replicas: readonly Replica[]) => replicas.filter((r) => r.deployment === name).length;
const avoiding = (d: PlaceDeployment, nodes: string[] | undefined) => (nodes ? { ...d, avoid: nodes } : d);
/** A deployment held back by its failures asks for no more replicas than it has (and gives none up). */
const heldBack = (d: PlaceDeployment, held: boolean, replicas: readonly Replica[]) =>
  held ? { ...d, replicas: Math.min(d.replicas, placedOf(d.name, replicas)) } : d;

type Placed = PlaceResult & { kept?: { readAt: number; assignSeq: number; replicas: Replica[] } };

async function placeIn(tx: Tx, now: number, settings: PlaceSettings, cache: PlacementCache): Promise<Placed> {
  const [c] = await tx.select().from(cluster).where(eq(cluster.id, 1));
  if (!c || c.generation === c.placedGeneration) return NOTHING;
  const rows = await readPlacementRows(tx, cache, now - settings.nodeLostAfterS * 1000);
  const { nodes: nodeRows, deployments: deploymentRows } = rows;
  const all = planInput({ ...rows, nextSeq: c.nextSeq, now, lostAfterS: settings.nodeLostAfterS });
  const repairs = await repairsIn(tx, all, rows, now, settings);
  const freed = new Set(repairs.release.map((x) => x.id));
  const failures = await recentFailures(tx, now);
  const still = all.replicas.filter((r) => !freed.has(r.id));
  const held = await failingIn(tx, rows, all.replicas, still, repairs.release, now);
  const kept = {
    ...all,
    replicas: still,
    deployments: all.deployments.map((d) => heldBack(avoiding(d, failures.get(d.name)), held.has(d.name), still)),
  };
  const adoption = await adoptIn(tx, kept, rows.orphans, now);
  const input = { ...kept, replicas: [...kept.replicas, ...adoption.adopted], nextSeq: adoption.nextSeq };
  const planned = plan(input, cache.fits);
  const p = { ...planned, release: [...freed, ...planned.release], pending: [...planned.pending] };
  for (const [name, f] of held) {
    const missing = (all.deployments.find((d) => d.name === name)?.replicas ?? 0) - placedOf(name, still);
    if (missing > 0) p.pending.push({ deployment: name, count: missing, reason: failingReason(f) });
  }
  const changed = new Set<string>();

  const released = new Set(p.release);
  if (released.size) {
    const gone = [...all.replicas, ...adoption.adopted].filter((r) => released.has(r.id)).flatMap((r) => r.shards);
    for (const s of gone) changed.add(s.nodeId);
    const ids = gone.map((s) => s.shardId);
    if (ids.length) {
      await tx.delete(allocations).where(inArray(allocations.shardId, ids));
      await tx.delete(portAllocations).where(inArray(portAllocations.shardId, ids));
      await tx.delete(shards).where(inArray(shards.id, ids));
    }
    await tx.delete(replicas).where(inArray(replicas.id, p.release));
  }
  // the management interface of the nodes new shards go to (a map of them all costs ms at fleet size, every run)
  const news = [...adoption.adopted, ...p.assign];
  const onto = new Set(news.flatMap((r) => r.shards.map((s) => s.nodeId)));
  const iface = new Map(onto.size ? nodeRows.filter((n) => onto.has(n.id)).map((n) => [n.id, n.mgmtInterface]) : []);
  // every new row of a kind in a few multi-row INSERTs, not one per replica: a statement is a round trip to a remote
  // database (one subrequest of a Worker's budget), however many rows it carries
  const added = {
    replicas: [] as (typeof replicas.$inferInsert)[],
    shards: [] as (typeof shards.$inferInsert)[],
    allocations: [] as (typeof allocations.$inferInsert)[],
    ports: [] as (typeof portAllocations.$inferInsert)[],
  };
  for (const r of news) {
    added.replicas.push({
      id: r.id,
      deployment: r.deployment,
      profile: r.profile,
      fingerprint: r.fingerprint,
      seq: r.seq,
      createdAt: now,
    });
    for (const s of r.shards) {
      changed.add(s.nodeId);
      const spec = startShard(input, r, s, iface.get(s.nodeId) ?? undefined);
      added.shards.push({ id: s.shardId, replicaId: r.id, nodeId: s.nodeId, rank: s.rank, spec: JSON.stringify(spec) });
      for (const deviceId of s.deviceIds) added.allocations.push({ nodeId: s.nodeId, deviceId, shardId: s.shardId });
      for (const port of new Set([s.httpPort, ...(s.rank === 0 ? [s.leaderPort, ...(s.enginePorts ?? [])] : [])]))
        added.ports.push({ nodeId: s.nodeId, port, shardId: s.shardId });
    }
  }
  await insertRows(tx, replicas, added.replicas);
  await insertRows(tx, shards, added.shards);
  await insertRows(tx, allocations, added.allocations);
  await insertRows(tx, portAllocations, added.ports);
  const pendingBy = new Map(p.pending.map((x) => [x.deployment, [{ count: x.count, reason: x.reason }]]));
  const pendingNow: Decisions["pending"] = [];
  for (const d of deploymentRows) {
    const next = pendingBy.get(d.name) ?? null;
    if (JSON.stringify(next) !== JSON.stringify(d.pending))
      pendingNow.push({ deployment: d.name, reason: next?.[0]?.reason ?? null });
    if (JSON.stringify(next) !== JSON.stringify(d.pending))
      await tx.update(deployments).set({ pending: next }).where(eq(deployments.name, d.name));
  }
  const seq = changed.size ? c.assignSeq + 1 : c.assignSeq;
  if (changed.size)
    await tx
      .update(nodes)
      .set({ assignIndex: seq })
      .where(inArray(nodes.id, [...changed]));
  await tx
    .update(cluster)
    // repairs left for the next minute's budget, or room freed for a replacement, leave the generation unplaced:
    // the next poll runs placement again
    .set({
      placedGeneration: repairs.deferred || p.again ? c.placedGeneration : c.generation,
      nextSeq: input.nextSeq + p.assign.length,
      assignSeq: seq,
    })
    .where(eq(cluster.id, 1));
  return {
    ran: true,
    kept: {
      readAt: c.assignSeq,
      assignSeq: seq,
      // as a read would parse them: the replicas kept, and the rows written for the new ones
      replicas: [
        ...still.filter((r) => !released.has(r.id)).map(({ ready: _ready, ...r }) => r),
        ...placedReplicas(added.replicas, added.shards),
      ],
    },
    changedNodes: [...changed].sort(),
    assigned: p.assign.length + adoption.adopted.length,
    released: p.release.length,
    decisions: {
      placed: p.assign.map((r) => ({
        replicaId: r.id,
        deployment: r.deployment,
        fabric: r.shards[0]?.fabric ?? "single",
        shards: r.shards.map((s) => `${s.nodeId}[${s.visibleDevices}]`),
      })),
      released: p.release,
      pending: pendingNow,
    },
  };
}

const isConflict = (e: unknown) =>
  /UNIQUE constraint failed|SQLITE_CONSTRAINT|SQLITE_BUSY|database is locked/i.test(
    `${String(e)} ${String((e as { cause?: unknown })?.cause ?? "")}`,
  );

// every poll and every write asks it: its SQL built once
const generations = prepared((q) =>
  q
    .select({ g: cluster.generation, p: cluster.placedGeneration, seq: cluster.assignSeq })
    .from(cluster)
    .where(eq(cluster.id, 1))
    .prepare(),
);

/**
 * Places what the declarations ask for, when anything changed since the last placement. An unchanged cluster costs
 * one plain read; a transaction that conflicts with another instance's is retried. `readFirst`: what changed since the
 * last run is read before the write transaction rather than under it, where the writes wait — every instance's on a
 * server (the default there), the instance's own on the fleet thread; the transaction then reads only what changed in
 * between (on the file's serving thread, reading twice costs the event loop more).
 */
export async function placeIfNeeded(
  store: Store,
  now: number,
  settings: PlaceSettings,
  cache: PlacementCache = newPlacementCache(),
  readFirst = store.server === true,
): Promise<PlaceResult> {
  const [c] = await generations(store.db, {});
  if (!c || c.g === c.p) return NOTHING;
  if (readFirst && behind(cache, c.g, c.seq)) await warmPlacementCache(store.db, cache);
  for (let attempt = 1; ; attempt++) {
    try {
      const { kept, ...placed } = await store.write((tx) => placeIn(tx, now, settings, cache));
      // committed: the replicas it left are what the next read would fetch
      if (kept) keepPlaced(cache, kept.readAt, kept.assignSeq, kept.replicas);
      return placed.ran ? placed : { ...placed, elsewhere: true };
    } catch (e) {
      if (attempt >= 5 || !isConflict(e)) throw e;
    }
  }
}
