// /api/v1/deployments: N replicas of a model in a pool, with how far placement got and why.
import { asc, eq } from "drizzle-orm";
import { Deployment, DeploymentSpec } from "../../shared/schemas/deployment.js";
import type { ModelSpec } from "../../shared/schemas/model.js";
import type { Q } from "../db/client.js";
import { deployments, models } from "../db/schema.js";
import { ApiError } from "../errors.js";
import { deploymentViews } from "../views/deployments.js";
import { type DeclaredKind, declarativeRoutes } from "./declarative.js";

type Row = typeof deployments.$inferSelect;

/** 400 when the deployment names profiles its (existing) model does not have. */
async function checkProfiles(q: Q, spec: DeploymentSpec) {
  if (!spec.profiles) return;
  const [m] = await q.select({ spec: models.spec }).from(models).where(eq(models.name, spec.model));
  if (!m) return;
  const have = new Set((JSON.parse(m.spec) as ModelSpec).profiles.map((p) => p.name));
  const fields = spec.profiles.flatMap((p, i) =>
    have.has(p)
      ? []
      : [
          {
            path: `spec.profiles.${i}`,
            message: `model ${spec.model} has no profile ${p} (it has ${[...have].join(", ")})`,
          },
        ],
  );
  if (fields.length)
    throw new ApiError(400, "validation_failed", fields.map((f) => `${f.path}: ${f.message}`).join("; "), fields);
}

const DEPLOYMENTS: DeclaredKind<Row> = {
  kind: "deployment",
  list: (q) => q.select().from(deployments).orderBy(asc(deployments.name)),
  find: async (q, name) => (await q.select().from(deployments).where(eq(deployments.name, name)))[0],
  save: async (tx, next, current) => {
    const row = {
      ...next,
      model: (JSON.parse(next.spec) as DeploymentSpec).model,
      pending: current?.pending ?? null,
      // a changed spec is a new attempt: its replicas are placed at once, whatever the old one's failures
      failing: current && current.spec === next.spec ? current.failing : null,
      // placement says again once it has planned the new spec; a new deployment has no replicas to wait for
      awaitsReady: current?.awaitsReady ?? false,
    };
    await tx.insert(deployments).values(row).onConflictDoUpdate({ target: deployments.name, set: row });
    return row;
  },
  remove: async (tx, name) => {
    await tx.delete(deployments).where(eq(deployments.name, name));
  },
};

export const deploymentRoutes = declarativeRoutes({
  collection: "deployments",
  one: "Deployment",
  many: "Deployments",
  example: "chat-prod",
  Spec: DeploymentSpec,
  View: Deployment,
  table: DEPLOYMENTS,
  view: (q, rows) => deploymentViews(q, rows),
  check: checkProfiles,
  docs: {
    list: "List deployments with their status",
    get: "Read a deployment; `spec` is exactly as written, `status` says how far it got and why",
    put: "Create or replace a deployment: N replicas of a model in a pool",
    putNotes: "A deployment of a model that does not exist yet is accepted and stays pending with that reason.",
    remove: "Delete a deployment; its replicas are stopped",
  },
});
