// The pure rules of a node's state: what every view, placement and the agent routes read (nothing here writes).
import type { NodeState } from "../../shared/schemas/node.js";
import type { NewEvent } from "../db/events.js";

/**
 * A node's state as every view shows it: `lost` once silent for longer than `lostAfterS`, else what an operator set.
 */
export function nodeState(
  n: { adminState: Exclude<NodeState, "lost">; lastSeenAt: number },
  now: number,
  lostAfterS: number,
): NodeState {
  return now - n.lastSeenAt > lostAfterS * 1000 ? "lost" : n.adminState;
}

/** A `node_recovered` event when a node that was lost (or silent past the limit) is heard from again. */
export function heardFrom(
  row: { id: string; lostAt: number | null; lastSeenAt: number; adminState: Exclude<NodeState, "lost"> },
  now: number,
  lostAfterS: number,
): NewEvent[] {
  if (row.lostAt === null && nodeState(row, now, lostAfterS) !== "lost") return [];
  return [recovered(row, now)];
}

/** The `node_recovered` event of node `row`, heard from at `now` after its silence. */
export function recovered(row: { id: string; lastSeenAt: number }, now: number): NewEvent & { nodeId: string } {
  return {
    type: "node_recovered",
    nodeId: row.id,
    message: `${row.id} is back after ${Math.round((now - row.lastSeenAt) / 1000)} s of silence`,
  };
}
