import type { InStatement } from "@libsql/client";
import { sql } from "drizzle-orm";
import { type Q, runStatement } from "./client.js";
import { statement } from "./prepared.js";
import { cluster } from "./schema.js";

const bump = statement((q) =>
  q
    .insert(cluster)
    .values({ id: 1, generation: 1 })
    .onConflictDoUpdate({ target: cluster.id, set: { generation: sql`${cluster.generation} + 1` } }),
);

/** The statement that bumps the cluster generation: something changed that can alter placement. */
export const bumpStatement = (q: Q): InStatement => bump(q, {});

/**
 * The statement that bumps the cluster generation when one of the shards `readyIds` (just reported ready) matters to
 * placement: its deployment keeps replicas until new ones are ready (`awaits_ready`: a rolling replacement), or is
 * held back by failures that a ready replica clears — or no placed replica names it (an engine to adopt or stop). A
 * deployment's replicas coming up after a change move nothing else: a thousand ready reports then start no
 * placement run.
 */
export const bumpIfReadyMattersStatement = (readyIds: readonly string[]): InStatement => ({
  sql:
    "update cluster set generation = generation + 1 where id = 1 and exists (select 1 from json_each(?) j " +
    "left join shards s on s.id = j.value left join replicas r on r.id = s.replica_id " +
    "left join deployments d on d.name = r.deployment " +
    "where d.name is null or d.awaits_ready or d.failing is not null)",
  args: [JSON.stringify(readyIds)],
});

/** Bumps the cluster generation: something changed that can alter placement. */
export async function bumpGeneration(q: Q): Promise<void> {
  await runStatement(q, bumpStatement(q));
}

/** The current cluster generation (0 before anything was declared). */
export async function readGeneration(q: Q): Promise<number> {
  const [row] = await q.select({ g: cluster.generation }).from(cluster);
  return row?.g ?? 0;
}

/**
 * The change index a write stamps on a row placement reads (`nodes.rev`, `shard_status.rev`): the generation + 1.
 * Any write committed after a read at generation G stamps at least G + 1, so `rev > G` finds every row changed since.
 */
export const nextRev = sql<number>`(coalesce((select ${cluster.generation} from ${cluster} where ${cluster.id} = 1), 0) + 1)`;
