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
