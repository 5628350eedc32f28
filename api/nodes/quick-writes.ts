// The agents' frequent writes in their usual case — a heartbeat with nothing new but its readings, a status report
// from a node that was not lost — as statements whose checks sit in their WHERE, sent with other agents' in one batch
// (Store.writeStatements). On a libSQL server a transaction costs a round trip per statement, each made while SQLite's
// one write lock is held; a batch is one round trip for many agents. The node's row is read before, outside any
// transaction; a statement that finds the row changed since changes nothing, and the caller takes its full path.

import type { InStatement } from "@libsql/client";
import type { Heartbeat, StatusReport } from "../../shared/schemas/agent.js";
import { readShardState } from "../../shared/schemas/common.js";
import type { Store } from "../db/client.js";
import { bumpStatement } from "../db/cluster.js";
import { dbFailure } from "../db/db-errors.js";
import { beatStatement, findHeartbeatRow, type HeardCheck, heardStatement } from "../db/nodes.js";
import { mergeReadings, readingsOf } from "../db/readings.js";
import { shardReportStatements } from "../db/shards.js";
import { heardFrom } from "./state.js";

/** A report that can change placement: a failed shard (an unknown state reads as failed), or a ready one (old replicas may drain). */
export const reportMovesPlacement = (shards: StatusReport["shards"]) =>
  shards.some((s) => ["failed", "ready"].includes(readShardState(s.state)));

/** The node's row as a heartbeat or report reads it, when it is known and heard from (no recovery to note). */
async function heardRow(store: Store, node: string, t: number, lostAfterS: number) {
  const row = await findHeartbeatRow(store.db, node);
  if (!row || heardFrom(row, t, lostAfterS).length) return undefined;
  // heardFrom's rule (silent for more than the limit), as the statement's WHERE checks it
  const check: HeardCheck = { id: node, t, seenAfter: t - lostAfterS * 1000 - 1 };
  return { row, check };
}

/**
 * Whether the first of `stmts` changed its row. A constraint the batch broke (the node deleted since the read: its
 * shard reports have no node) leaves the full path to answer; the database failing is the caller's error.
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
 * Writes a heartbeat `hb` whose facts hash to the `digest` last applied to the node's inventory: its readings merged,
 * its shard reports, the liveness times. False, with nothing written, where that is not the case (or the row changed
 * between the read and the write): the heartbeat then takes its full path.
 */
export async function quickBeat(
  store: Store,
  node: string,
  hb: Heartbeat,
  digest: string,
  t: number,
  lostAfterS: number,
): Promise<boolean> {
  const heard = await heardRow(store, node, t, lostAfterS);
  if (!heard || heard.row.heartbeatDigest !== digest) return false;
  const { row, check } = heard;
  const readings = mergeReadings(row.readings ? JSON.parse(row.readings) : undefined, readingsOf(hb));
  const q = store.db;
  const stmts = [
    beatStatement(q, { ...check, digest, readingsBefore: row.readings }, JSON.stringify(readings), hb.imexConfig),
    ...shardReportStatements(q, node, hb.shards ?? [], t),
  ];
  return wroteFirst(store, stmts);
}

/**
 * Writes a status report of a node that was heard from: its shards' states, the liveness time, and a new generation
 * when the report can change placement. False where the node is unknown or was lost (the full path notes its return).
 */
export async function quickStatus(
  store: Store,
  node: string,
  shards: StatusReport["shards"],
  t: number,
  lostAfterS: number,
): Promise<boolean> {
  const heard = await heardRow(store, node, t, lostAfterS);
  if (!heard) return false;
  const q = store.db;
  const stmts = [
    heardStatement(q, heard.check),
    ...shardReportStatements(q, node, shards, t),
    ...(reportMovesPlacement(shards) ? [bumpStatement(q)] : []),
  ];
  return wroteFirst(store, stmts);
}
