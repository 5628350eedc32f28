// A deployment as the API and the console show it: its spec and status (replica counts, phase, why replicas wait).
import { and, asc, eq, inArray } from "drizzle-orm";
import type { DeploymentSpec } from "../../shared/schemas/deployment.js";
import type { Q } from "../db/client.js";
import { metadataOf } from "../db/resources.js";
import { deployments, models, replicas, shardStatus, shards } from "../db/schema.js";
import { FAILED_AFTER, failingReason } from "../placement/failing.js";
import { policyOf, replicaState, type ShardFacts, serves } from "../placement/serving.js";

type Row = typeof deployments.$inferSelect;

/** Deployments with their status: replica counts, phase and why replicas are pending. */
export async function deploymentViews(q: Q, rows: Row[]) {
  const names = [...new Set(rows.map((r) => r.model))];
  const known = new Set(
    names.length
      ? (await q.select({ name: models.name }).from(models).where(inArray(models.name, names))).map((m) => m.name)
      : [],
  );
  const placed = rows.length
    ? await q
        .select({
          deployment: replicas.deployment,
          replica: replicas.id,
          state: shardStatus.state,
          transport: shardStatus.transport,
        })
        .from(replicas)
        .innerJoin(shards, eq(shards.replicaId, replicas.id))
        .leftJoin(shardStatus, and(eq(shardStatus.nodeId, shards.nodeId), eq(shardStatus.shardId, shards.id)))
        .where(
          inArray(
            replicas.deployment,
            rows.map((r) => r.name),
          ),
        )
    : [];
  // each replica of each deployment with its shards' facts (one pass over the rows)
  const byDeployment = new Map<string, Map<string, ShardFacts[]>>();
  for (const p of placed) {
    let mine = byDeployment.get(p.deployment);
    if (!mine) byDeployment.set(p.deployment, (mine = new Map()));
    mine.set(p.replica, [...(mine.get(p.replica) ?? []), p]);
  }
  return rows.map((r) => {
    const spec = JSON.parse(r.spec) as DeploymentSpec;
    const mine = byDeployment.get(r.name) ?? new Map<string, ShardFacts[]>();
    const replicaIds = [...mine.keys()];
    // ready: served by the router (a degraded replica only under `transport: prefer`)
    const ready = [...mine.values()].filter((s) => serves(replicaState(s), policyOf(spec))).length;
    const missing = Math.max(0, spec.replicas - replicaIds.length);
    const fallback = known.has(r.model)
      ? "waiting for placement: it runs when an agent polls"
      : `model ${r.model} does not exist`;
    const pending = missing ? (r.pending?.length ? r.pending : [{ count: missing, reason: fallback }]) : [];
    const failed = ready < spec.replicas && (r.failing?.count ?? 0) >= FAILED_AFTER;
    const phase =
      ready >= spec.replicas
        ? ("Ready" as const)
        : failed
          ? ("Failed" as const)
          : missing
            ? ("Pending" as const)
            : ("Starting" as const);
    return {
      name: r.name,
      spec,
      status: {
        phase,
        desired: spec.replicas,
        placed: replicaIds.length,
        ready,
        pending,
        ...(failed && r.failing ? { failure: failingReason(r.failing) } : {}),
      },
      metadata: metadataOf(r),
    };
  });
}

/** Every deployment, by name, with its status. */
export async function listDeploymentViews(q: Q) {
  return deploymentViews(q, await q.select().from(deployments).orderBy(asc(deployments.name)));
}
