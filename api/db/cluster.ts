import { sql } from "drizzle-orm";
import type { Q } from "./client.js";
import { cluster } from "./schema.js";

/** Bumps the cluster generation: something changed that can alter placement. */
export async function bumpGeneration(q: Q): Promise<void> {
  await q
    .insert(cluster)
    .values({ id: 1, generation: 1 })
    .onConflictDoUpdate({ target: cluster.id, set: { generation: sql`${cluster.generation} + 1` } });
}

/** The current cluster generation (0 before anything was declared). */
export async function readGeneration(q: Q): Promise<number> {
  const [row] = await q.select({ g: cluster.generation }).from(cluster);
  return row?.g ?? 0;
}
