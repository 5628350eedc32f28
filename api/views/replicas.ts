// A replica as the API and the console show it: its shards, nodes, devices, rank 0's endpoint and state.
import { and, asc, eq, inArray } from "drizzle-orm";
import { labelOfDeviceNumber } from "../../shared/classes.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import { failureText } from "../../shared/schemas/failure.js";
import type { Q } from "../db/client.js";
import { replicas, shardStatus, shards } from "../db/schema.js";
import { replicaState } from "../placement/serving.js";

/** Replicas with their shards, devices, endpoint and state. */
export async function replicaViews(q: Q, rows: (typeof replicas.$inferSelect)[]) {
  if (!rows.length) return [];
  const shardRows = await q
    .select({
      id: shards.id,
      replicaId: shards.replicaId,
      nodeId: shards.nodeId,
      rank: shards.rank,
      spec: shards.spec,
      state: shardStatus.state,
      message: shardStatus.message,
      failure: shardStatus.failure,
      transport: shardStatus.transport,
    })
    .from(shards)
    .leftJoin(shardStatus, and(eq(shardStatus.nodeId, shards.nodeId), eq(shardStatus.shardId, shards.id)))
    .where(
      inArray(
        shards.replicaId,
        rows.map((r) => r.id),
      ),
    )
    .orderBy(asc(shards.rank));
  return rows.map((r) => {
    const mine = shardRows
      .filter((s) => s.replicaId === r.id)
      .map((s) => ({ ...s, spec: JSON.parse(s.spec) as StartShard }));
    const leader = mine.find((s) => s.rank === 0);
    const state = replicaState(mine);
    return {
      id: r.id,
      deployment: r.deployment,
      profile: r.profile,
      fingerprint: r.fingerprint,
      createdAt: r.createdAt,
      state,
      endpoint: leader ? `http://${leader.spec.leaderAddr}:${leader.spec.httpPort}` : null,
      shards: mine.map((s) => ({
        shardId: s.id,
        nodeId: s.nodeId,
        rank: s.rank,
        devices: s.spec.deviceIds.map(labelOfDeviceNumber),
        httpPort: s.spec.httpPort,
        fabric: s.spec.fabric,
        state: s.state ?? ("unknown" as const),
        message: s.message ?? null,
        lastFailure: s.failure ?? null,
        failure: s.failure ? failureText(s.failure) : null,
        transport: s.transport ?? null,
      })),
    };
  });
}

/** Every replica (or a deployment's), oldest first, as the API shows it. */
export async function listReplicaViews(q: Q, deployment?: string) {
  const rows = await q
    .select()
    .from(replicas)
    .where(deployment ? eq(replicas.deployment, deployment) : undefined)
    .orderBy(asc(replicas.seq));
  return replicaViews(q, rows);
}
