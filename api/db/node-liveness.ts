// The writes that keep a node's liveness and readings: marking it heard, a heartbeat with nothing new but its readings
// (in a transaction, or as statements for the agents' batches), and noting a node back from silence in the same batch.
import type { InStatement } from "@libsql/client";
import { and, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import type { Q } from "./client.js";
import { param, prepared, statement } from "./prepared.js";
import { nodes } from "./schema.js";

/** The node heard from at `t`, no longer lost: run in a transaction (markHeard) or sent in a batch (heardStatements). */
const heard = (q: Q) =>
  q
    .update(nodes)
    .set({ lastSeenAt: param("t"), lostAt: null })
    .where(eq(nodes.id, sql.placeholder("id")));
const heardNow = prepared((q) => heard(q).prepare());
const heardBack = statement<{ id: string; t: number }>(heard);

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
  return [...backStatements(check, check.back), heardBack(q, { id: check.id, t: check.t })];
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
