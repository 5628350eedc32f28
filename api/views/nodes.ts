// A node as the API and the console show it: its summary in every list, its detail page, and the operator actions.
import { asc, eq } from "drizzle-orm";
import type { Q } from "../db/client.js";
import { classCounts, type NodeRow, readInventory } from "../db/nodes.js";
import { devices, shardStatus } from "../db/schema.js";
import { nodeState } from "../nodes/state.js";

/** The summary every list shows of a node. */
export function nodeSummary(row: NodeRow, classes: Record<string, number>, now: number, lostAfterS: number) {
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
