import type { InStatement } from "@libsql/client";
import { and, asc, count, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import { devicesOf } from "../../shared/classes.js";
import { homeDomain } from "../../shared/fabric.js";
import type { RegisterRequest } from "../../shared/schemas/agent.js";
import type { EventType } from "../../shared/schemas/event.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { type Actor, auditEvent } from "./audit-event.js";
import type { Q, Tx } from "./client.js";
import { bumpGeneration, nextRev } from "./cluster.js";
import { insertEvents } from "./events.js";
import { param, prepared, statement } from "./prepared.js";
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

const heardNow = prepared((q) =>
  q
    .update(nodes)
    .set({ lastSeenAt: param("t"), lostAt: null })
    .where(eq(nodes.id, sql.placeholder("id")))
    .prepare(),
);

/** Records that the node was heard from at `t` (a status report, a poll): no longer lost. */
export async function markHeard(q: Q, id: string, t: number): Promise<void> {
  await heardNow(q, { id, t });
}

/** The stored readings with a heartbeat's merged in by the database (`patch`: readingsPatch). */
const patchedReadings = sql`json_patch(coalesce(${nodes.readings}, '{}'), ${sql.placeholder("patch")})`;

/** What a heartbeat with nothing new but its readings writes: the liveness times, the IMEX summary, the readings. */
const beatValues = {
  lastHeartbeatAt: param("t"),
  lastSeenAt: param("t"),
  lostAt: null,
  imexConfigDigest: param("imexDigest"),
  imexConfigAddresses: param("imexAddresses"),
  readings: patchedReadings,
};

const beatNow = prepared((q) =>
  q
    .update(nodes)
    .set(beatValues)
    .where(eq(nodes.id, sql.placeholder("id")))
    .prepare(),
);

/**
 * A heartbeat with nothing new but its readings: those (merged by `patch`, readingsPatch), the liveness times and the
 * IMEX peer list's summary.
 */
export async function writeBeat(
  q: Q,
  id: string,
  t: number,
  patch: string,
  imexConfig: { digest: string; addresses: number } | undefined,
): Promise<void> {
  await beatNow(q, {
    id,
    t,
    patch,
    imexDigest: imexConfig?.digest ?? null,
    imexAddresses: imexConfig?.addresses ?? null,
  });
}

/**
 * A write's node `id`, heard from at `t`; last seen at or before `seenAfter`, it was silent past the limit. `back`: the
 * message of its `node_recovered` event, where the statements are to note its return (the row the token's check read
 * showed it lost or silent past the limit, or the statements without it found so); without, they change its row only
 * while it is still heard from.
 */
export type HeardCheck = { id: string; t: number; seenAfter: number; back?: string };

/** The row is not lost and not silent past the limit (`seenAfter`): a write that checks it has no return to note. */
const stillHeard = and(
  eq(nodes.id, sql.placeholder("id")),
  isNull(nodes.lostAt),
  gt(nodes.lastSeenAt, sql.placeholder("seenAfter")),
);

const heardIfStill = statement<HeardCheck>((q) =>
  q
    .update(nodes)
    .set({ lastSeenAt: param("t") })
    .where(stillHeard),
);

/**
 * Statements that note node `check.id` back where its row shows it lost or silent past the limit (and, with `digest`,
 * its last applied heartbeat had those facts): its `node_recovered` event (`message`) and a new generation (a node back
 * changes what placement may use). Each changes a row only then; the statement recording the node heard from goes
 * after them, in the same batch.
 */
function backStatements(check: HeardCheck, message: string, digest?: string): InStatement[] {
  const back = {
    sql:
      "select 1 from nodes where id = ? and (lost_at is not null or last_seen_at <= ?)" +
      (digest === undefined ? "" : " and heartbeat_digest = ?"),
    args: [check.id, check.seenAfter, ...(digest === undefined ? [] : [digest])],
  };
  return [
    {
      sql: `insert into events (at, type, node_id, message) select ?, 'node_recovered', ?, ? where exists (${back.sql})`,
      args: [check.t, check.id, message, ...back.args],
    },
    {
      sql:
        `insert into cluster (id, generation) select 1, 1 where exists (${back.sql}) ` +
        "on conflict (id) do update set generation = generation + 1",
      args: back.args,
    },
  ];
}

/**
 * The statements that record node `check.id` heard from at `check.t`, with nothing read first. The rows each changes:
 * the first 1 where the node came back (`check.back`), the last 1 where the row was written.
 */
export function heardStatements(q: Q, check: HeardCheck): InStatement[] {
  if (check.back === undefined) return [heardIfStill(q, check)];
  return [
    ...backStatements(check, check.back),
    { sql: "update nodes set last_seen_at = ?, lost_at = null where id = ?", args: [check.t, check.id] },
  ];
}

type BeatValues = {
  id: string;
  t: number;
  seenAfter: number;
  digest: string;
  patch: string;
  imexDigest: string | null;
  imexAddresses: number | null;
};

/** A heartbeat's readings and liveness times, where the last one applied had the same facts (`digest`) and `also`. */
const beatWhere = (also?: SQL) =>
  statement<BeatValues>((q) =>
    q
      .update(nodes)
      .set(beatValues)
      .where(and(eq(nodes.id, sql.placeholder("id")), eq(nodes.heartbeatDigest, sql.placeholder("digest")), also)),
  );
const beatIfStill = beatWhere(stillHeard);
const beatBack = beatWhere();

/**
 * The statements that write a heartbeat with nothing new but its readings — merged into the stored ones by `patch`
 * (readingsPatch), the liveness times, the IMEX peer list's summary — where the last heartbeat applied to the node's
 * inventory had the same facts (`digest`), noting the node's return where `check.back` says to. The rows each
 * changes: the first 1 where the node came back, the last 1 where the heartbeat was written.
 */
export function beatStatements(
  q: Q,
  check: HeardCheck & { digest: string },
  patch: string,
  imexConfig: { digest: string; addresses: number } | undefined,
): InStatement[] {
  const values: BeatValues = {
    id: check.id,
    t: check.t,
    seenAfter: check.seenAfter,
    digest: check.digest,
    patch,
    imexDigest: imexConfig?.digest ?? null,
    imexAddresses: imexConfig?.addresses ?? null,
  };
  if (check.back === undefined) return [beatIfStill(q, values)];
  return [...backStatements(check, check.back, check.digest), beatBack(q, values)];
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
