// A deployment as the API and the console show it: its spec and status (replica counts, phase, why replicas wait).
import { asc, inArray } from "drizzle-orm";
import type { DeploymentSpec } from "../../shared/schemas/deployment.js";
import type { Q } from "../db/client.js";
import { metadataOf } from "../db/resources.js";
import { deployments, models } from "../db/schema.js";
import { FAILED_AFTER, failingReason } from "../placement/failing.js";
import { policyOf, serves } from "../placement/serving.js";
import { replicaCounts } from "./replica-counts.js";

type Row = typeof deployments.$inferSelect;

/** Deployments with their status: replica counts, phase and why replicas are pending. */
export async function deploymentViews(q: Q, rows: Row[]) {
  const names = [...new Set(rows.map((r) => r.model))];
  const known = new Set(
    names.length
      ? (await q.select({ name: models.name }).from(models).where(inArray(models.name, names))).map((m) => m.name)
      : [],
  );
  const counts = await replicaCounts(
    q,
    rows.map((r) => r.name),
  );
  return rows.map((r) => {
    const spec = JSON.parse(r.spec) as DeploymentSpec;
    const n = counts.get(r.name) ?? { placed: 0, ready: 0, degraded: 0 };
    // ready: served by the router (a degraded replica only under `transport: prefer`)
    const ready = n.ready + (serves("degraded", policyOf(spec)) ? n.degraded : 0);
    const missing = Math.max(0, spec.replicas - n.placed);
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
        placed: n.placed,
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
