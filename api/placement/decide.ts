// What one placement run decides, and the writes that carry it out: read everything (rows.ts), free what repair frees,
// adopt orphaned engines, plan(), and build every row the change writes. Nothing is written here: the writes are
// returned, to run in a write transaction — at once, in the transaction that read (apply.ts), or later, in one that
// finds the cluster as it was when the decision was read.
import { eq } from "drizzle-orm";
import { setAssignIndexes } from "../db/assign-index.js";
import type { Q } from "../db/client.js";
import { inJson } from "../db/in-json.js";
import { insertRows } from "../db/insert-rows.js";
import { allocations, type cluster, deployments, portAllocations, replicas, shards } from "../db/schema.js";
import { failingReason } from "./failing.js";
import { failingIn, recentFailures } from "./hold.js";
import { placedReplicas, planInput } from "./input.js";
import { plan } from "./plan.js";
import { adoptIn, type PlaceSettings, repairsIn } from "./repair-adopt.js";
import { type PlacementCache, readPlacementRows } from "./rows.js";
import { startShard } from "./start-shard.js";
import type { PlaceDeployment, Replica } from "./types.js";
import type { Write } from "./writes.js";

/** The cluster row a decision was made on: a transaction that finds it unchanged may write the decision as it is. */
export type Basis = typeof cluster.$inferSelect;

/** What one placement run decided, for the log: each new replica where it went, each freed one, each new reason. */
export type Decisions = {
  placed: { replicaId: string; deployment: string; fabric: string; shards: string[] }[];
  released: string[];
  pending: { deployment: string; reason: string | null }[];
};

export type Decided = {
  basis: Basis;
  writes: Write[];
  /** The cluster row's counters after the writes (written last, by the transaction, with its timing). */
  cluster: Pick<Basis, "placedGeneration" | "nextSeq" | "assignSeq">;
  changedNodes: string[];
  assigned: number;
  released: number;
  decisions: Decisions;
  /** What the cache may keep once the writes committed: the replicas left placed, as a read would parse them. */
  kept: { readAt: number; assignSeq: number; replicas: Replica[] };
};

const placedOf = (name: string, replicas: readonly Replica[]) => replicas.filter((r) => r.deployment === name).length;
const avoiding = (d: PlaceDeployment, nodes: string[] | undefined) => (nodes ? { ...d, avoid: nodes } : d);
/** A deployment held back by its failures asks for no more replicas than it has (and gives none up). */
const heldBack = (d: PlaceDeployment, held: boolean, replicas: readonly Replica[]) =>
  held ? { ...d, replicas: Math.min(d.replicas, placedOf(d.name, replicas)) } : d;

/** Decides the placement of the cluster as `q` reads it, `c` its cluster row (a generation not yet placed). */
export async function decide(
  q: Q,
  c: Basis,
  now: number,
  settings: PlaceSettings,
  cache: PlacementCache,
): Promise<Decided> {
  const writes: Write[] = [];
  const rows = await readPlacementRows(q, cache, now - settings.nodeLostAfterS * 1000);
  const { nodes: nodeRows, deployments: deploymentRows } = rows;
  const all = planInput({ ...rows, nextSeq: c.nextSeq, now, lostAfterS: settings.nodeLostAfterS });
  const repairs = await repairsIn(q, writes, all, rows, now, settings);
  const freed = new Set(repairs.release.map((x) => x.id));
  const failures = await recentFailures(q, now, repairs.events);
  const still = all.replicas.filter((r) => !freed.has(r.id));
  const held = failingIn(writes, rows, all.replicas, still, repairs.release, now);
  const kept = {
    ...all,
    replicas: still,
    deployments: all.deployments.map((d) => heldBack(avoiding(d, failures.get(d.name)), held.has(d.name), still)),
  };
  const adoption = adoptIn(writes, kept, rows.orphans, now);
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
    if (ids.length)
      writes.push(async (tx) => {
        await tx.delete(allocations).where(inJson(allocations.shardId, ids));
        await tx.delete(portAllocations).where(inJson(portAllocations.shardId, ids));
        await tx.delete(shards).where(inJson(shards.id, ids));
      });
    writes.push((tx) => tx.delete(replicas).where(inJson(replicas.id, p.release)));
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
  if (news.length)
    writes.push(async (tx) => {
      await insertRows(tx, replicas, added.replicas);
      await insertRows(tx, shards, added.shards);
      await insertRows(tx, allocations, added.allocations);
      await insertRows(tx, portAllocations, added.ports);
    });
  const pendingBy = new Map(p.pending.map((x) => [x.deployment, [{ count: x.count, reason: x.reason }]]));
  const pendingNow: Decisions["pending"] = [];
  const rolling = new Set(p.rolling);
  for (const d of deploymentRows) {
    const next = pendingBy.get(d.name) ?? null;
    const awaitsReady = rolling.has(d.name);
    const samePending = JSON.stringify(next) === JSON.stringify(d.pending);
    if (samePending && awaitsReady === d.awaitsReady) continue;
    if (!samePending) pendingNow.push({ deployment: d.name, reason: next?.[0]?.reason ?? null });
    writes.push((tx) => tx.update(deployments).set({ pending: next, awaitsReady }).where(eq(deployments.name, d.name)));
  }
  const seq = changed.size ? c.assignSeq + 1 : c.assignSeq;
  if (changed.size) writes.push((tx) => setAssignIndexes(tx, [...changed], seq));
  // repairs left for the next minute's budget, or room freed for a replacement, leave the generation unplaced: the
  // next poll runs placement again
  const placedGeneration = repairs.deferred || p.again ? c.placedGeneration : c.generation;
  return {
    basis: c,
    writes,
    cluster: { placedGeneration, nextSeq: input.nextSeq + p.assign.length, assignSeq: seq },
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
