// What placement reads from the database: every node with the facts of its inventory (parsed once per inventory
// version), models, deployments, replicas, shards and their last reported states.
import { and, eq, getTableColumns, inArray, isNotNull, notExists } from "drizzle-orm";
import { StartShard } from "../../shared/schemas/assignment.js";
import type { Q } from "../db/client.js";
import { deployments, models, nodes, replicas, shardStatus, shards } from "../db/schema.js";
import type { Orphan } from "./adopt.js";
import { type FactsCache, nodeFacts } from "./input.js";

/**
 * Nodes with the facts of their inventories: only inventories that changed since `cache` saw them are read and parsed.
 */
async function readNodes(q: Q, cache: FactsCache) {
  const { inventory: _inventory, ...columns } = getTableColumns(nodes);
  const rows = await q.select(columns).from(nodes);
  const versionOf = (n: { registeredAt: number; inventoryVersion: number }) =>
    `${n.registeredAt}:${n.inventoryVersion}`;
  const stale = rows.filter((n) => cache.get(n.id)?.version !== versionOf(n)).map((n) => n.id);
  for (let i = 0; i < stale.length; i += 500) {
    const chunk = await q
      .select({
        id: nodes.id,
        registeredAt: nodes.registeredAt,
        inventoryVersion: nodes.inventoryVersion,
        inventory: nodes.inventory,
      })
      .from(nodes)
      .where(inArray(nodes.id, stale.slice(i, i + 500)));
    for (const r of chunk) cache.set(r.id, { version: versionOf(r), facts: nodeFacts(r.inventory) });
  }
  const ids = new Set(rows.map((r) => r.id));
  for (const id of cache.keys()) if (!ids.has(id)) cache.delete(id);
  return rows.filter((r) => cache.has(r.id)).map((r) => ({ ...r, facts: cache.get(r.id)!.facts }));
}

export type PlacementRows = Awaited<ReturnType<typeof readPlacementRows>>;

/** Every row placement reads; `cache` spares re-parsing unchanged inventories (a fresh one reads them all). */
export async function readPlacementRows(q: Q, cache: FactsCache = new Map()) {
  const [nodeRows, modelRows, deploymentRows, replicaRows, shardRows, states, orphans] = await Promise.all([
    readNodes(q, cache),
    q.select({ name: models.name, spec: models.spec }).from(models),
    q
      .select({
        name: deployments.name,
        spec: deployments.spec,
        pending: deployments.pending,
        failing: deployments.failing,
      })
      .from(deployments),
    q.select().from(replicas),
    q.select().from(shards),
    q
      .select({
        nodeId: shardStatus.nodeId,
        shardId: shardStatus.shardId,
        state: shardStatus.state,
        message: shardStatus.message,
      })
      .from(shardStatus),
    readOrphans(q),
  ]);
  return {
    nodes: nodeRows,
    models: modelRows,
    deployments: deploymentRows,
    replicas: replicaRows,
    shards: shardRows,
    states,
    orphans,
  };
}

/**
 * Engines nodes reported running (with their spec) that no shard row names: the candidates for adoption. A spec that
 * does not parse is reported with `spec: undefined`, to be cleared.
 */
async function readOrphans(q: Q): Promise<(Omit<Orphan, "spec"> & { shardId: string; spec?: Orphan["spec"] })[]> {
  const rows = await q
    .select({
      nodeId: shardStatus.nodeId,
      shardId: shardStatus.shardId,
      state: shardStatus.state,
      spec: shardStatus.spec,
    })
    .from(shardStatus)
    .where(
      and(
        isNotNull(shardStatus.spec),
        notExists(q.select({ id: shards.id }).from(shards).where(eq(shards.id, shardStatus.shardId))),
      ),
    );
  return rows.map((r) => {
    let spec: Orphan["spec"] | undefined;
    try {
      const parsed = StartShard.safeParse(JSON.parse(r.spec!));
      spec = parsed.success && parsed.data.shardId === r.shardId ? parsed.data : undefined;
    } catch {
      spec = undefined;
    }
    return { nodeId: r.nodeId, shardId: r.shardId, state: r.state, ...(spec ? { spec } : {}) };
  });
}

/**
 * Runs placement inside `tx` if the generation moved; writes replicas, shards, allocations, pending reasons, indexes.
 */
