// What placement reads from the database: every node with the facts of its inventory (parsed once per inventory
// version), models, deployments, replicas, shards and their last reported states.
import { getTableColumns, inArray } from "drizzle-orm";
import type { Q } from "../db/client.js";
import { deployments, models, nodes, replicas, shardStatus, shards } from "../db/schema.js";
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

/** Every row placement reads; `cache` spares re-parsing unchanged inventories (a fresh one reads them all). */
export async function readPlacementRows(q: Q, cache: FactsCache = new Map()) {
  const [nodeRows, modelRows, deploymentRows, replicaRows, shardRows, states] = await Promise.all([
    readNodes(q, cache),
    q.select({ name: models.name, spec: models.spec }).from(models),
    q.select({ name: deployments.name, spec: deployments.spec, pending: deployments.pending }).from(deployments),
    q.select().from(replicas),
    q.select().from(shards),
    q.select({ nodeId: shardStatus.nodeId, shardId: shardStatus.shardId, state: shardStatus.state }).from(shardStatus),
  ]);
  return {
    nodes: nodeRows,
    models: modelRows,
    deployments: deploymentRows,
    replicas: replicaRows,
    shards: shardRows,
    states,
  };
}

/**
 * Runs placement inside `tx` if the generation moved; writes replicas, shards, allocations, pending reasons, indexes.
 */
