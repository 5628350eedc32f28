import { asc, count, eq, sql } from "drizzle-orm";
import { devicesOf } from "../../shared/classes.js";
import { homeDomain } from "../../shared/fabric.js";
import type { RegisterRequest } from "../../shared/schemas/agent.js";
import type { EventType } from "../../shared/schemas/event.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { type Actor, auditEvent } from "./audit-event.js";
import type { Q, Tx } from "./client.js";
import { bumpGeneration, nextRev } from "./cluster.js";
import { insertEvents } from "./events.js";
import { prepared } from "./prepared.js";
import { applyReadings, impliedDigest, type Readings } from "./readings.js";
import { devices, nodeAssignIndex, nodes, shardStatus } from "./schema.js";

export type NodeRow = typeof nodes.$inferSelect;

/** The stored inventory of a node row (validated when it was written), with the heartbeats' readings since. */
export function readInventory(row: Pick<NodeRow, "inventory" | "readings">): Inventory {
  const inv = JSON.parse(row.inventory) as Inventory;
  return row.readings ? applyReadings(inv, JSON.parse(row.readings) as Readings) : inv;
}

/** Fetches one node row. */
export async function findNode(q: Q, id: string): Promise<NodeRow | undefined> {
  const [row] = await q.select().from(nodes).where(eq(nodes.id, id));
  return row;
}

const heartbeatRow = prepared((q) =>
  q
    .select({
      id: nodes.id,
      readings: nodes.readings,
      heartbeatDigest: nodes.heartbeatDigest,
      lastDomain: nodes.lastDomain,
      adminState: nodes.adminState,
      lastSeenAt: nodes.lastSeenAt,
      lostAt: nodes.lostAt,
    })
    .from(nodes)
    .where(eq(nodes.id, sql.placeholder("id")))
    .prepare(),
);

/**
 * What a heartbeat or a status report reads of its node's row (inside its transaction): the liveness fields, the
 * readings and the digest of the last heartbeat applied to the inventory — not the inventory, which a heartbeat reads
 * only when something else changed.
 */
export async function findHeartbeatRow(q: Q, id: string) {
  const [row] = await heartbeatRow(q, { id });
  return row;
}

/** A node's stored inventory text. */
export async function findInventoryText(q: Q, id: string): Promise<string | undefined> {
  const [row] = await q.select({ inventory: nodes.inventory }).from(nodes).where(eq(nodes.id, id));
  return row?.inventory;
}

/**
 * Writes a registration: the node row (created or replaced) and its devices, derived from the inventory. Resolves with
 * the facts digest stored for it: that of the heartbeat its inventory implies (readings.ts `impliedDigest`).
 */
export async function upsertNode(q: Q, req: RegisterRequest, tokenHash: string, now: number, existing?: NodeRow) {
  const heartbeatDigest = await impliedDigest(req.inventory);
  const values = {
    hostname: req.hostname,
    mgmtAddr: req.mgmtAddr,
    mgmtInterface: req.mgmtInterface ?? null,
    pool: req.labels?.pool ?? "default",
    labels: req.labels ?? {},
    agentVersion: req.agentVersion,
    tokenHash,
    portFirst: req.portRange?.first ?? null,
    portLast: req.portRange?.last ?? null,
    inventory: JSON.stringify(req.inventory),
    readings: null,
    heartbeatDigest,
    lastDomain: homeDomain(req.inventory.gpus) ?? existing?.lastDomain ?? null,
    lastSeenAt: now,
    lostAt: null,
    rev: nextRev,
  };
  if (existing)
    await q
      .update(nodes)
      .set({ ...values, inventoryVersion: sql`${nodes.inventoryVersion} + 1` })
      .where(eq(nodes.id, req.nodeId));
  // (no index row: a node placement never gave shards reads as index 0)
  else await q.insert(nodes).values({ id: req.nodeId, registeredAt: now, inventoryVersion: 1, ...values });
  await replaceDevices(q, req.nodeId, req.inventory);
  return heartbeatDigest;
}

/** Rewrites the devices table rows of one node from its inventory. */
export async function replaceDevices(q: Q, nodeId: string, inv: Inventory) {
  await q.delete(devices).where(eq(devices.nodeId, nodeId));
  const list = devicesOf(inv.gpus);
  if (!list.length) return;
  await q.insert(devices).values(
    list.map((d) => ({
      nodeId,
      deviceId: d.id,
      label: d.label,
      class: d.class,
      uuid: d.uuid,
      card: d.card,
      migIndex: d.migIndex ?? null,
      memoryTotalMiB: d.memoryTotalMiB,
    })),
  );
}

/** Deletes a node and everything stored about it; false when there was none. */
export async function deleteNode(q: Q, id: string): Promise<boolean> {
  await q.delete(devices).where(eq(devices.nodeId, id));
  await q.delete(shardStatus).where(eq(shardStatus.nodeId, id));
  await q.delete(nodeAssignIndex).where(eq(nodeAssignIndex.nodeId, id));
  const gone = await q.delete(nodes).where(eq(nodes.id, id)).returning({ id: nodes.id });
  return gone.length > 0;
}

/** Devices by class for one node or all of them: node id → class → count, classes sorted. */
export async function classCounts(q: Q, nodeId?: string): Promise<Map<string, Record<string, number>>> {
  const rows = await q
    .select({ nodeId: devices.nodeId, class: devices.class, n: count() })
    .from(devices)
    .where(nodeId === undefined ? undefined : eq(devices.nodeId, nodeId))
    .groupBy(devices.nodeId, devices.class)
    .orderBy(asc(devices.nodeId), asc(devices.class));
  const out = new Map<string, Record<string, number>>();
  for (const r of rows) out.set(r.nodeId, { ...out.get(r.nodeId), [r.class]: r.n });
  return out;
}

/** All nodes, by id. */
export async function listNodes(q: Q) {
  return q.select().from(nodes).orderBy(asc(nodes.id));
}

/**
 * Sets what an operator wants of a node (cordoned, draining, ready) with an event and a new cluster generation; a node
 * already in that state is returned unchanged. Undefined when there is no such node.
 */
export async function setAdminState(
  tx: Tx,
  id: string,
  adminState: NodeRow["adminState"],
  event: EventType,
  now: number,
  actor?: Actor,
): Promise<NodeRow | undefined> {
  const before = await findNode(tx, id);
  if (!before || before.adminState === adminState) return before;
  const [after] = await tx.update(nodes).set({ adminState, rev: nextRev }).where(eq(nodes.id, id)).returning();
  const change = { before: before.adminState, after: adminState };
  const message = `${id}: ${before.adminState} → ${adminState}`;
  await insertEvents(tx, now, [auditEvent(event, { kind: "node", name: id }, actor, message, change, id)]);
  await bumpGeneration(tx);
  return after;
}
