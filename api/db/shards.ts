import type { InStatement } from "@libsql/client";
import { asc, eq, inArray, sql } from "drizzle-orm";
import type { StartShard } from "../../shared/schemas/assignment.js";
import { readShardState } from "../../shared/schemas/common.js";
import type { ShardFailure } from "../../shared/schemas/failure.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";
import { assignIndexOf } from "./assign-index.js";
import { type Q, runStatement, type Store } from "./client.js";
import { nextRev } from "./cluster.js";
import { param, prepared, statement } from "./prepared.js";
import { shardStatus, shards } from "./schema.js";

export type ShardReportInput = {
  shardId: string;
  replicaId?: string;
  state: string;
  message?: string;
  /** What a running engine was started with (registration only): kept for adoption. */
  spec?: unknown;
  /** Why its engine stopped unasked: kept until a newer one comes. */
  failure?: ShardFailure;
  /** What its NCCL uses: each report says it anew (absent: nothing known, e.g. since a restart). */
  transport?: ShardTransport;
  /** When the node reached the state (its clock): a report older than the stored one changes nothing. */
  at?: number;
};

/** How long a stored shard report outranks one the node timed earlier (ms, by the server's clock). */
export const REPORT_ORDER_MS = 30_000;

const reportRow = statement<{
  nodeId: string;
  shardId: string;
  replicaId: string | null;
  state: string;
  message: string | null;
  updatedAt: number;
  spec: string | null;
  failure: string | null;
  transport: string | null;
  reportedAt: number | null;
}>((q) =>
  q
    .insert(shardStatus)
    .values({
      nodeId: param("nodeId"),
      shardId: param("shardId"),
      replicaId: param("replicaId"),
      state: param("state") as never,
      message: param("message"),
      updatedAt: param("updatedAt"),
      spec: param("spec"),
      failure: param("failure") as never,
      transport: param("transport") as never,
      reportedAt: param("reportedAt"),
      rev: nextRev,
    })
    .onConflictDoUpdate({
      target: [shardStatus.nodeId, shardStatus.shardId],
      set: {
        replicaId: sql`coalesce(excluded.replica_id, ${shardStatus.replicaId})`,
        state: sql`excluded.state`,
        message: sql`excluded.message`,
        updatedAt: sql`excluded.updated_at`,
        spec: sql`coalesce(excluded.spec, ${shardStatus.spec})`,
        failure: sql`coalesce(excluded.failure, ${shardStatus.failure})`,
        transport: sql`excluded.transport`,
        reportedAt: sql`coalesce(excluded.reported_at, ${shardStatus.reportedAt})`,
        rev: sql`excluded.rev`,
      },
      // reports cross on their way (through different instances, a heartbeat's copy behind a report): the newer by the
      // node's clock stands — unless the stored one was written over REPORT_ORDER_MS ago by ours (the node's clock
      // stepped back: its reports are taken again after that, and its heartbeats say every shard's state anew)
      setWhere: sql`excluded.reported_at is null or ${shardStatus.reportedAt} is null or excluded.reported_at >= ${shardStatus.reportedAt} or excluded.updated_at > ${shardStatus.updatedAt} + ${sql.raw(String(REPORT_ORDER_MS))}`,
    }),
);

/**
 * The statements that record the latest state of each reported shard of a node (the last report of a shard in the
 * call wins; one the node timed before the stored one changes nothing); unknown states are stored as `failed`.
 */
export function shardReportStatements(q: Q, nodeId: string, reports: ShardReportInput[], now: number): InStatement[] {
  const latest = new Map(reports.map((r) => [r.shardId, r]));
  return [...latest.values()].map((r) => {
    const state = readShardState(r.state);
    return reportRow(q, {
      nodeId,
      shardId: r.shardId,
      replicaId: r.replicaId ?? null,
      state,
      message: r.message ?? (state === r.state ? null : `unknown state "${r.state}" read as failed`),
      updatedAt: now,
      spec: r.spec === undefined ? null : JSON.stringify(r.spec),
      failure: r.failure ? JSON.stringify(r.failure) : null,
      transport: r.transport ? JSON.stringify(r.transport) : null,
      reportedAt: r.at ?? null,
    });
  });
}

/** Records the latest state of each reported shard of a node; unknown states are stored as `failed`. */
export async function upsertShardReports(q: Q, nodeId: string, reports: ShardReportInput[], now: number) {
  for (const stmt of shardReportStatements(q, nodeId, reports, now)) await runStatement(q, stmt);
}

/** A node's assignment index and its desired shards, the index read first. */
export type NodeAssignment = { index: number; shards: StartShard[] };

/**
 * The node's full desired shard set and its assignment index. The index is read first: a placement committed between
 * the two reads gives an older index with the newer shards (the agent's next poll is answered again at once), never
 * the newer index with shards it does not yet hold.
 */
export async function nodeAssignments(store: Store, nodeId: string): Promise<NodeAssignment> {
  const index = await assignIndexOf(store.db, nodeId);
  const rows = await shardSpecsOf(store.db, { id: nodeId });
  return { index: index ?? 0, shards: rows.map((r) => JSON.parse(r.spec) as StartShard) };
}
/**
 * The desired shards of each of `ids`, in as few reads as a few hundred nodes take (a nodes' answer read after their
 * indexes, as nodeAssignments reads them): a placement wakes the long-polls of every node it changed at once.
 */
export async function shardsOfNodes(q: Q, ids: readonly string[]): Promise<Map<string, StartShard[]>> {
  const by = new Map<string, StartShard[]>(ids.map((id) => [id, []]));
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await q
      .select({ nodeId: shards.nodeId, spec: shards.spec })
      .from(shards)
      .where(inArray(shards.nodeId, ids.slice(i, i + 500)))
      .orderBy(asc(shards.nodeId), sql`${shards.id}`);
    for (const r of rows) by.get(r.nodeId)?.push(JSON.parse(r.spec) as StartShard);
  }
  return by;
}
const shardSpecsOf = prepared((q) =>
  q
    .select({ spec: shards.spec })
    .from(shards)
    .where(eq(shards.nodeId, sql.placeholder("id")))
    .orderBy(sql`${shards.id}`)
    .prepare(),
);
