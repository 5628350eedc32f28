// Each node's long-poll index (`node_assign_index`): placement sets it on every node whose desired shards it changed,
// from one sequence that grows in commit order; a poll waits for it to move. In a table of its own, not in `nodes`: a
// change moves a thousand nodes' indexes, and each write to `nodes` rewrites a row that holds the node's inventory.
import { eq, inArray, sql } from "drizzle-orm";
import { type Q, runStatement } from "./client.js";
import { prepared } from "./prepared.js";
import { nodeAssignIndex, nodes } from "./schema.js";

const indexOf = prepared((q) =>
  q
    .select({ index: sql<number>`coalesce(${nodeAssignIndex.assignIndex}, 0)` })
    .from(nodes)
    .leftJoin(nodeAssignIndex, eq(nodeAssignIndex.nodeId, nodes.id))
    .where(eq(nodes.id, sql.placeholder("id")))
    .prepare(),
);

/** A node's assignment index (0 before placement first gave it shards); undefined when there is no such node. */
export async function assignIndexOf(q: Q, nodeId: string): Promise<number | undefined> {
  const [n] = await indexOf(q, { id: nodeId });
  return n?.index;
}

/** The index rows of `nodeIds` (at most a few hundred: one bound parameter each); a node with no row has none here. */
export function assignIndexesOf(q: Q, nodeIds: readonly string[]): Promise<{ id: string; index: number }[]> {
  return q
    .select({ id: nodeAssignIndex.nodeId, index: nodeAssignIndex.assignIndex })
    .from(nodeAssignIndex)
    .where(inArray(nodeAssignIndex.nodeId, [...nodeIds]));
}

/** Sets the assignment index of each of `nodeIds` to `index` (the ids bound as one JSON array, any number of them). */
export async function setAssignIndexes(q: Q, nodeIds: readonly string[], index: number): Promise<void> {
  await runStatement(q, {
    sql:
      "insert into node_assign_index (node_id, assign_index) select value, ? from json_each(?) where true " +
      "on conflict (node_id) do update set assign_index = excluded.assign_index",
    args: [index, JSON.stringify(nodeIds)],
  });
}
