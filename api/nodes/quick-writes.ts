// The agents' frequent writes in their usual case — a heartbeat with nothing new but its readings, a status report
// from a node that was not lost, a poll refreshing the node's last-seen time — as statements whose checks sit in their
// WHERE, sent with other agents' in one batch (Store.writeStatements), with nothing read first: on a libSQL server a
// transaction costs a round trip per statement, each made while SQLite's one write lock is held; a batch is one round
// trip for many agents. Where a check fails (the node silent past the limit or lost, the heartbeat's facts new, the
// node unknown) the first statement changes nothing, and the caller takes its full path in a transaction, which notes
// what the checks found.
import type { InStatement } from "@libsql/client";
import type { Heartbeat, StatusReport } from "../../shared/schemas/agent.js";
import { readShardState } from "../../shared/schemas/common.js";
import type { Q, Store } from "../db/client.js";
import { bumpIfReadyMattersStatement, bumpStatement } from "../db/cluster.js";
import { dbFailure } from "../db/db-errors.js";
import { beatStatement, type HeardCheck, heardStatement } from "../db/nodes.js";
import { readingsPatch } from "../db/readings.js";
import { shardReportStatements } from "../db/shards.js";

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

/** The check that the node is known and heard from at `t`: not lost, and not silent for more than the limit. */
const heardAt = (node: string, t: number, lostAfterS: number): HeardCheck => ({
  id: node,
  t,
  seenAfter: t - lostAfterS * 1000 - 1,
});

/**
 * Whether the first of `stmts` changed its row. A constraint the batch broke (an unknown node's shard reports have no
 * node to belong to) leaves the full path to answer; the database failing is the caller's error.
 */
async function wroteFirst(store: Store, stmts: InStatement[]): Promise<boolean> {
  try {
    const [changed] = await store.writeStatements(stmts);
    return changed === 1;
  } catch (e) {
    if (dbFailure(e)) throw e;
    return false;
  }
}

/**
 * Writes a heartbeat `hb` whose facts hash to the `digest` last applied to the node's inventory: its readings merged
 * into the stored ones, its shard reports, the liveness times. False where the checks fail: the heartbeat then takes
 * its full path.
 */
export function quickBeat(
  store: Store,
  node: string,
  hb: Heartbeat,
  digest: string,
  t: number,
  lostAfterS: number,
): Promise<boolean> {
  const q = store.db;
  return wroteFirst(store, [
    beatStatement(q, { ...heardAt(node, t, lostAfterS), digest }, readingsPatch(hb), hb.imexConfig),
    ...shardReportStatements(q, node, hb.shards ?? [], t),
  ]);
}

/**
 * Writes a status report of a node heard from: its shards' states, the liveness time, and a new generation when the
 * report can change placement. False where the node is unknown or was lost (the full path notes its return).
 */
export function quickStatus(
  store: Store,
  node: string,
  shards: StatusReport["shards"],
  t: number,
  lostAfterS: number,
): Promise<boolean> {
  const q = store.db;
  const bump = reportBump(q, shards);
  return wroteFirst(store, [
    heardStatement(q, heardAt(node, t, lostAfterS)),
    ...shardReportStatements(q, node, shards, t),
    ...(bump ? [bump] : []),
  ]);
}

/**
 * Records a poll of a node heard from: its last-seen time. False where the node is unknown, was lost or is silent past
 * the limit (the full path notes its return).
 */
export function quickHeard(store: Store, node: string, t: number, lostAfterS: number): Promise<boolean> {
  return wroteFirst(store, [heardStatement(store.db, heardAt(node, t, lostAfterS))]);
}
