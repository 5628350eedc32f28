// The agents' frequent writes — a heartbeat with nothing new but its readings, a status report from a node that was
// not lost, a poll refreshing the node's last-seen time — as statements whose checks sit in their WHERE, sent with
// other agents' in one batch (Store.writeStatements), with nothing read first: on a libSQL server a transaction costs a
// round trip per statement, each made while SQLite's one write lock is held; a batch is one round trip for many agents.
// A poll or a heartbeat from a node lost or silent past the limit notes its return in the same batch (its event and a
// new generation, under the same checks), so that a fleet back after an outage writes no transaction per node. Where
// a check fails (the heartbeat's facts new, a report's node lost or unknown) the statement that says so changes
// nothing, and the caller takes its full path in a transaction, which notes what the checks found.
import type { InStatement } from "@libsql/client";
import type { Heartbeat, StatusReport } from "../../shared/schemas/agent.js";
import { readShardState } from "../../shared/schemas/common.js";
import type { Q, Store, WrittenEvent } from "../db/client.js";
import { bumpIfReadyMattersStatement, bumpStatement } from "../db/cluster.js";
import { dbFailure } from "../db/db-errors.js";
import type { NewEvent } from "../db/events.js";
import { beatStatements, type HeardCheck, heardBackStatements } from "../db/nodes.js";
import { readingsPatch } from "../db/readings.js";
import { shardReportStatements } from "../db/shards.js";
import { recovered } from "./state.js";

/**
 * The statement that moves the generation for a report, where it can change placement: a failed shard (an unknown
 * state reads as failed) or a degraded transport always; a ready one where placement waits for it
 * (bumpIfReadyMattersStatement); none for the rest.
 */
export function reportBump(q: Q, shards: StatusReport["shards"]): InStatement | undefined {
  if (shards.some((s) => readShardState(s.state) === "failed" || s.transport?.verdict === "degraded"))
    return bumpStatement(q);
  const ready = shards.filter((s) => readShardState(s.state) === "ready").map((s) => s.shardId);
  return ready.length ? bumpIfReadyMattersStatement(ready) : undefined;
}

/** Node `node` heard from at `t`, with the last-seen time past which it was silent beyond the limit. */
const heardAt = (node: string, t: number, lostAfterS: number): HeardCheck => ({
  id: node,
  t,
  seenAfter: t - lostAfterS * 1000 - 1,
});

/**
 * Whether statement `at` of `stmts` (the first where absent) changed its row; `stored`: the events the batch stored,
 * from the rows each changed. A constraint the batch broke (an unknown node's shard reports have no node to belong to)
 * leaves the full path to answer; the database failing is the caller's error.
 */
async function wrote(
  store: Store,
  stmts: InStatement[],
  at = 0,
  stored?: (rows: number[]) => WrittenEvent[],
): Promise<boolean> {
  try {
    const rows = await store.writeStatements(stmts, stored);
    return rows[at] === 1;
  } catch (e) {
    if (dbFailure(e)) throw e;
    return false;
  }
}

/**
 * A batch's `node_recovered` event, told where its first statement wrote it. Its message is worked out from the row the
 * token's check read: its last-seen time is the database's unless the node was heard from since, and then the batch
 * writes no event.
 */
const backIfFirst =
  (event: NewEvent & { nodeId: string }) =>
  ([n]: number[]): WrittenEvent[] =>
    n ? [event] : [];

/**
 * Writes a heartbeat `hb` from node `row` whose facts hash to the `digest` last applied to the node's inventory: its
 * readings merged into the stored ones, its shard reports, the liveness times — and the node's return where it was
 * lost or silent past the limit. False where the facts differ or the node is unknown: the heartbeat then takes its
 * full path.
 */
export function quickBeat(
  store: Store,
  row: { id: string; lastSeenAt: number },
  hb: Heartbeat,
  digest: string,
  t: number,
  lostAfterS: number,
): Promise<boolean> {
  const q = store.db;
  const event = recovered(row, t);
  const beat = beatStatements(
    q,
    { ...heardAt(row.id, t, lostAfterS), digest },
    event.message,
    readingsPatch(hb),
    hb.imexConfig,
  );
  return wrote(
    store,
    [...beat, ...shardReportStatements(q, row.id, hb.shards ?? [], t)],
    beat.length - 1,
    backIfFirst(event),
  );
}

/**
 * Writes a status report of node `row`: its shards' states, the liveness time, the node's return where it was lost or
 * silent past the limit, and a new generation when the report can change placement. False where the node is unknown
 * (the full path says so).
 */
export function quickStatus(
  store: Store,
  row: { id: string; lastSeenAt: number },
  shards: StatusReport["shards"],
  t: number,
  lostAfterS: number,
): Promise<boolean> {
  const q = store.db;
  const bump = reportBump(q, shards);
  const event = recovered(row, t);
  const heard = heardBackStatements(heardAt(row.id, t, lostAfterS), event.message);
  return wrote(
    store,
    [...heard, ...shardReportStatements(q, row.id, shards, t), ...(bump ? [bump] : [])],
    heard.length - 1,
    backIfFirst(event),
  );
}

/**
 * Records a poll of node `row` at `t`: its last-seen time, and where the database shows it lost or silent past the
 * limit its return (its `node_recovered` event and a new generation). True where the node is known.
 */
export function pollHeard(
  store: Store,
  row: { id: string; lastSeenAt: number },
  t: number,
  lostAfterS: number,
): Promise<boolean> {
  const event = recovered(row, t);
  const heard = heardBackStatements(heardAt(row.id, t, lostAfterS), event.message);
  return wrote(store, heard, heard.length - 1, backIfFirst(event));
}
