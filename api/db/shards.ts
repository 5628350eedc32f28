import { sql } from "drizzle-orm";
import { readShardState } from "../../shared/schemas/common.js";
import type { ShardFailure } from "../../shared/schemas/failure.js";
import type { Q } from "./client.js";
import { shardStatus } from "./schema.js";

export type ShardReportInput = {
  shardId: string;
  replicaId?: string;
  state: string;
  message?: string;
  /** What a running engine was started with (registration only): kept for adoption. */
  spec?: unknown;
  /** Why its engine stopped unasked: kept until a newer one comes. */
  failure?: ShardFailure;
};

/** Records the latest state of each reported shard of a node; unknown states are stored as `failed`. */
export async function upsertShardReports(q: Q, nodeId: string, reports: ShardReportInput[], now: number) {
  if (!reports.length) return;
  const latest = new Map(reports.map((r) => [r.shardId, r]));
  await q
    .insert(shardStatus)
    .values(
      [...latest.values()].map((r) => ({
        nodeId,
        shardId: r.shardId,
        replicaId: r.replicaId ?? null,
        state: readShardState(r.state),
        message:
          r.message ?? (readShardState(r.state) === r.state ? null : `unknown state "${r.state}" read as failed`),
        updatedAt: now,
        spec: r.spec === undefined ? null : JSON.stringify(r.spec),
        failure: r.failure ?? null,
      })),
    )
    .onConflictDoUpdate({
      target: [shardStatus.nodeId, shardStatus.shardId],
      set: {
        replicaId: sql`coalesce(excluded.replica_id, ${shardStatus.replicaId})`,
        state: sql`excluded.state`,
        message: sql`excluded.message`,
        updatedAt: sql`excluded.updated_at`,
        spec: sql`coalesce(excluded.spec, ${shardStatus.spec})`,
        failure: sql`coalesce(excluded.failure, ${shardStatus.failure})`,
      },
    });
}
