// A node as the API and the console show it: its summary in every list, its detail page, and the operator actions.
import { and, asc, eq, gt } from "drizzle-orm";
import type { Q } from "../db/client.js";
import { classCounts, type NodeRow, readInventory } from "../db/nodes.js";
import { readInParts } from "../db/read-parts.js";
import { devices, nodes, shardStatus } from "../db/schema.js";
import { nodeState } from "../nodes/state.js";

/** What every list shows of a node: no inventory (kilobytes of JSON each, at 10,000 nodes tens of MB a read). */
const summaryColumns = {
  id: nodes.id,
  hostname: nodes.hostname,
  mgmtAddr: nodes.mgmtAddr,
  pool: nodes.pool,
  labels: nodes.labels,
  adminState: nodes.adminState,
  agentVersion: nodes.agentVersion,
  registeredAt: nodes.registeredAt,
  lastHeartbeatAt: nodes.lastHeartbeatAt,
  lastSeenAt: nodes.lastSeenAt,
};
type NodeSummaryRow = Pick<NodeRow, keyof typeof summaryColumns>;

/**
 * Every node's summary columns, by id (of one pool when `pool` is given), read `part` rows at a time with a turn of the
 * event loop between parts: on the embedded file a read runs on the event loop, and 10,000 whole rows at once held it
 * ~350 ms (their summary columns ~150 ms).
 */
export function listNodeSummaries(q: Q, pool?: string, part = 500): Promise<NodeSummaryRow[]> {
  return readInParts(
    part,
    (n) => n.id,
    (after) =>
      q
        .select(summaryColumns)
        .from(nodes)
        .where(
          and(
            pool === undefined ? undefined : eq(nodes.pool, pool),
            after === undefined ? undefined : gt(nodes.id, after),
          ),
        )
        .orderBy(asc(nodes.id))
        .limit(part),
  );
}

/** The summary every list shows of a node. */
export function nodeSummary(row: NodeSummaryRow, classes: Record<string, number>, now: number, lostAfterS: number) {
  return {
    id: row.id,
    hostname: row.hostname,
    mgmtAddr: row.mgmtAddr,
    pool: row.pool,
    labels: row.labels,
    state: nodeState(row, now, lostAfterS),
    adminState: row.adminState,
    agentVersion: row.agentVersion,
    registeredAt: row.registeredAt,
    lastHeartbeatAt: row.lastHeartbeatAt,
    lastSeenAt: row.lastSeenAt,
    classes,
  };
}

/** One node in full: summary, devices, shard states and inventory. */
export async function nodeDetail(q: Q, row: NodeRow, now: number, lostAfterS: number) {
  const devs = await q.select().from(devices).where(eq(devices.nodeId, row.id)).orderBy(asc(devices.deviceId));
  const shards = await q
    .select()
    .from(shardStatus)
    .where(eq(shardStatus.nodeId, row.id))
    .orderBy(asc(shardStatus.shardId));
  const classes = (await classCounts(q, row.id)).get(row.id) ?? {};
  return {
    ...nodeSummary(row, classes, now, lostAfterS),
    mgmtInterface: row.mgmtInterface,
    devices: devs.map((d) => ({
      id: d.deviceId,
      label: d.label,
      class: d.class,
      uuid: d.uuid,
      memoryTotalMiB: d.memoryTotalMiB,
    })),
    shards: shards.map((s) => ({
      shardId: s.shardId,
      replicaId: s.replicaId,
      state: s.state,
      message: s.message,
      updatedAt: s.updatedAt,
      transport: s.transport ?? null,
    })),
    inventory: readInventory(row),
  };
}

/**
 * What an operator can do to a node (POST /api/v1/nodes/{id}/<verb> and the console's buttons): the admin state and
 * event each sets, and the admin states each makes sense from.
 */
export const NODE_ACTIONS = {
  cordon: {
    adminState: "cordoned",
    event: "node_cordoned",
    summary: "Cordon a node: no new placements on it",
    label: "Cordon",
    done: "cordoned: no new placements",
    from: ["ready", "draining"],
  },
  uncordon: {
    adminState: "ready",
    event: "node_uncordoned",
    summary: "Uncordon a node: placements may use it again",
    label: "Uncordon",
    done: "uncordoned: placements may use it again",
    from: ["cordoned", "draining"],
  },
  drain: {
    adminState: "draining",
    event: "node_draining",
    summary: "Drain a node: move its replicas away, then keep it cordoned",
    label: "Drain",
    done: "draining: its replicas move away, one at a time",
    from: ["ready", "cordoned"],
  },
} as const;
export type NodeAction = keyof typeof NODE_ACTIONS;
