// How many replicas each deployment has placed, and how many of them are ready or degraded, counted by the database:
// a deployment's status answers every PUT, and reading each of a large deployment's replicas with its shards to count
// them cost more than the write (1,600 replicas: about half of the PUT, ~12 ms on a 2-core machine). The rule is replicaState()'s
// (placement/serving.ts), in SQL; a test holds the two to the same answers.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Q } from "../db/client.js";
import { replicas, shardStatus, shards } from "../db/schema.js";

export type ReplicaCounts = { placed: number; ready: number; degraded: number };

const verdict = sql`json_extract(${shardStatus.transport}, '$.verdict')`;

/** Per deployment in `names` with a placed replica: replicas placed, ready, and degraded (else ready). */
export async function replicaCounts(q: Q, names: string[]): Promise<Map<string, ReplicaCounts>> {
  if (!names.length) return new Map();
  // one row per replica: whether a shard failed, whether every shard is ready with its transport judged, whether
  // one's transport is degraded (a shard with no reported state is neither failed nor ready)
  const perReplica = q
    .select({
      deployment: replicas.deployment,
      failed: sql<number>`max(coalesce(${shardStatus.state} = 'failed', 0))`.as("failed"),
      judged:
        sql<number>`min(coalesce(${shardStatus.state} = 'ready' and coalesce(${verdict}, '') <> 'pending', 0))`.as(
          "judged",
        ),
      degraded: sql<number>`max(coalesce(${verdict} = 'degraded', 0))`.as("degraded"),
    })
    .from(replicas)
    .innerJoin(shards, eq(shards.replicaId, replicas.id))
    .leftJoin(shardStatus, and(eq(shardStatus.nodeId, shards.nodeId), eq(shardStatus.shardId, shards.id)))
    .where(inArray(replicas.deployment, names))
    .groupBy(replicas.id)
    .as("per_replica");
  const up = sql`${perReplica.failed} = 0 and ${perReplica.judged} = 1`;
  const rows = await q
    .select({
      deployment: perReplica.deployment,
      placed: sql<number>`count(*)`,
      ready: sql<number>`coalesce(sum(${up} and ${perReplica.degraded} = 0), 0)`,
      degraded: sql<number>`coalesce(sum(${up} and ${perReplica.degraded} = 1), 0)`,
    })
    .from(perReplica)
    .groupBy(perReplica.deployment);
  return new Map(rows.map(({ deployment, ...n }) => [deployment, n]));
}
