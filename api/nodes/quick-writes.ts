// The agents' frequent writes — a heartbeat with nothing new but its readings, a status report, a poll refreshing the
// node's last-seen time — as statements whose checks sit in their WHERE, sent with other agents' in one batch
// (Store.writeStatements), with nothing read first: on a libSQL server a transaction costs a round trip per statement,
// each made while SQLite's one write lock is held; a batch is one round trip for many agents. A node whose row, as the
// token's check read it, shows it lost or silent past the limit is noted back in the same batch (its event and a new
// generation, under the same check in the database), so that a fleet back after an outage writes no transaction per
// node. Where a check fails (the heartbeat's facts new, the node lost since its token was checked, or unknown) the
// statement that says so changes nothing, and the caller takes its full path in a transaction, which notes what it
// finds; a poll, which has none, sends a second batch that notes the node back where its row shows it so.
import type { InStatement } from "@libsql/client";
import type { Heartbeat, StatusReport } from "../../shared/schemas/agent.js";
import { readShardState } from "../../shared/schemas/common.js";
import type { Q, Store, WrittenEvent } from "../db/client.js";
import { bumpIfReadyMattersStatement, bumpStatement } from "../db/cluster.js";
import { dbFailure } from "../db/db-errors.js";
import { beatStatements, type HeardCheck, heardStatements } from "../db/node-liveness.js";
import { readingsPatch } from "../db/readings.js";
import { shardReportStatements } from "../db/shards.js";
import { heardFrom, recovered } from "./state.js";

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

/** What heardAt() needs of the node row the token's check read. */
type SeenRow = Parameters<typeof heardFrom>[0];

/**
 * Node `row` heard from at `t`: the statements' check, noting its return where the row shows it lost or silent past
 * the limit (or `back`: the statements without found it so), and the event the batch stored where it did.
 */
function heardAt(row: SeenRow, t: number, lostAfterS: number, back = heardFrom(row, t, lostAfterS).length > 0) {
  const check: HeardCheck = { id: row.id, t, seenAfter: t - lostAfterS * 1000 - 1 };
  if (!back) return { check };
  // its message is worked out from the row the token's check read: its last-seen time is the database's unless the
  // node was heard from since, and then the batch writes no event
  const event = recovered(row, t);
  return {
    check: { ...check, back: event.message },
    stored: ([n]: number[]): WrittenEvent[] => (n ? [event] : []),
  };
}

/**
 * Whether statement `at` of `stmts` changed its row; `stored`: the events the batch stored, from the rows each changed.
 * A constraint the batch broke (an unknown node's shard reports have no node to belong to) leaves the full path to
 * answer; the database failing is the caller's error.
 */
async function wrote(
  store: Store,
  stmts: InStatement[],
  at: number,
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
 * Writes a heartbeat `hb` from node `row` whose facts hash to the `digest` last applied to the node's inventory: its
 * readings merged into the stored ones, its shard reports, the liveness times — and the node's return where it was
 * lost or silent past the limit. False where the facts differ or the node is unknown: the heartbeat then takes its
 * full path.
 */
export function quickBeat(
  store: Store,
  row: SeenRow,
  hb: Heartbeat,
  digest: string,
  t: number,
  lostAfterS: number,
): Promise<boolean> {
  const q = store.db;
  const { check, stored } = heardAt(row, t, lostAfterS);
  const beat = beatStatements(q, { ...check, digest }, readingsPatch(hb), hb.imexConfig);
  const shards = shardReportStatements(q, row.id, hb.shards ?? [], t);
  return wrote(store, [...beat, ...shards], beat.length - 1, stored);
}

/**
 * Writes a status report of node `row`: its shards' states, the liveness time, the node's return where it was lost or
 * silent past the limit, and a new generation when the report can change placement. False where the node is unknown,
 * or was lost since the token's check (the full path notes what it finds).
 */
export function quickStatus(
  store: Store,
  row: SeenRow,
  shards: StatusReport["shards"],
  t: number,
  lostAfterS: number,
): Promise<boolean> {
  const q = store.db;
  const bump = reportBump(q, shards);
  const { check, stored } = heardAt(row, t, lostAfterS);
  const heard = heardStatements(q, check);
  const reports = shardReportStatements(q, row.id, shards, t);
  return wrote(store, [...heard, ...reports, ...(bump ? [bump] : [])], heard.length - 1, stored);
}

/**
 * Records a poll of node `row` at `t`: its last-seen time, and where it was lost or silent past the limit its return
 * (its `node_recovered` event and a new generation). A node lost since the token's check (another instance's sweep)
 * is found by a second batch, which notes its return; a node unknown by then changes nothing.
 */
export async function pollHeard(store: Store, row: SeenRow, t: number, lostAfterS: number): Promise<void> {
  const q = store.db;
  const first = heardAt(row, t, lostAfterS);
  const heard = heardStatements(q, first.check);
  if ((await wrote(store, heard, heard.length - 1, first.stored)) || first.check.back !== undefined) return;
  const back = heardAt(row, t, lostAfterS, true);
  const again = heardStatements(q, back.check);
  await wrote(store, again, again.length - 1, back.stored);
}
