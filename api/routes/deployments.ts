import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { Deployment, DeploymentSpec } from "../../shared/schemas/deployment.js";
import { type ModelSpec, ResourceName } from "../../shared/schemas/model.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import type { Q } from "../db/client.js";
import { deployments, models } from "../db/schema.js";
import { type DeclaredKind, deleteDeclared, putDeclared } from "../declarative.js";
import { etagOf } from "../db/resources.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonBody, jsonResponse } from "../openapi.js";
import { deploymentViews } from "../views/deployments.js";
import { IfMatch, PutConditions, putBody, sameName, writtenSpec } from "./resource-shapes.js";

const NameParam = z.object({ name: ResourceName.openapi({ param: { name: "name", in: "path" }, example: "chat-prod" }) });
const PutDeployment = putBody(DeploymentSpec, "PutDeployment");
type Row = typeof deployments.$inferSelect;

/** 400 when the deployment names profiles its (existing) model does not have. */
async function checkProfiles(q: Q, spec: DeploymentSpec) {
  if (!spec.profiles) return;
  const [m] = await q.select({ spec: models.spec }).from(models).where(eq(models.name, spec.model));
  if (!m) return;
  const have = new Set((JSON.parse(m.spec) as ModelSpec).profiles.map((p) => p.name));
  const fields = spec.profiles.flatMap((p, i) => (have.has(p) ? [] : [{ path: `spec.profiles.${i}`, message: `model ${spec.model} has no profile ${p} (it has ${[...have].join(", ")})` }]));
  if (fields.length) throw new ApiError(400, "validation_failed", fields.map((f) => `${f.path}: ${f.message}`).join("; "), fields);
}

const DEPLOYMENTS: DeclaredKind<Row> = {
  kind: "deployment",
  find: async (q, name) => (await q.select().from(deployments).where(eq(deployments.name, name)))[0],
  save: async (tx, next, current) => {
    const row = { ...next, model: (JSON.parse(next.spec) as DeploymentSpec).model, pending: current?.pending ?? null };
    await tx.insert(deployments).values(row).onConflictDoUpdate({ target: deployments.name, set: row });
    return row;
  },
  remove: async (tx, name) => {
    await tx.delete(deployments).where(eq(deployments.name, name));
  },
};

const common = { tags: ["deployments"], security: adminSecurity, middleware: requireAdmin };

const list = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/deployments",
  operationId: "listDeployments",
  summary: "List deployments with their status",
  responses: { 200: jsonResponse(z.object({ items: z.array(Deployment) }), "Deployments by name"), ...errorResponses(401, 403) },
});

const get = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/deployments/{name}",
  operationId: "getDeployment",
  summary: "Read a deployment; `spec` is exactly as written, `status` says how far it got and why",
  request: { params: NameParam },
  responses: { 200: jsonResponse(Deployment, "The deployment (ETag header: its version)"), ...errorResponses(400, 401, 403, 404) },
});

const put = createRoute({
  ...common,
  method: "put",
  path: "/api/v1/deployments/{name}",
  operationId: "putDeployment",
  summary: "Create or replace a deployment: N replicas of a model in a pool",
  description:
    "The body is `{spec}` (`name`, `status` and `metadata` may be sent back as read; `status` and `metadata` are ignored). " +
    "A deployment of a model that does not exist yet is accepted and stays pending with that reason. " +
    "A PUT that changes nothing keeps the version. `If-Match` makes it conditional (412 when the ETag is not current).",
  request: { params: NameParam, headers: PutConditions, body: jsonBody(PutDeployment) },
  responses: { 200: jsonResponse(Deployment, "Replaced (or unchanged)"), 201: jsonResponse(Deployment, "Created"), ...errorResponses(400, 401, 403, 412, 413, 415) },
});

const remove = createRoute({
  ...common,
  method: "delete",
  path: "/api/v1/deployments/{name}",
  operationId: "deleteDeployment",
  summary: "Delete a deployment; its replicas are stopped",
  request: { params: NameParam, headers: IfMatch },
  responses: { 204: { description: "Deleted" }, ...errorResponses(400, 401, 403, 404, 412) },
});

export const deploymentRoutes = new OpenAPIHono<AppEnv>()
  .openapi(list, async (c) => {
    const db = c.var.deps.store.db;
    return c.json({ items: await deploymentViews(db, await db.select().from(deployments).orderBy(asc(deployments.name))) }, 200);
  })
  .openapi(get, async (c) => {
    const { name } = c.req.valid("param");
    const db = c.var.deps.store.db;
    const [row] = await db.select().from(deployments).where(eq(deployments.name, name));
    if (!row) throw new ApiError(404, "not_found", `no deployment ${name}`);
    c.header("etag", etagOf(row.version));
    return c.json((await deploymentViews(db, [row]))[0]!, 200);
  })
  .openapi(put, async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    sameName(name, body.name);
    const { store, now } = c.var.deps;
    const { row, created } = await putDeclared(store, DEPLOYMENTS, {
      name,
      written: await writtenSpec(c),
      ifMatch: c.req.header("if-match"),
      ifNoneMatch: c.req.header("if-none-match"),
      now: now(),
      check: (tx) => checkProfiles(tx, body.spec),
    });
    c.header("etag", etagOf(row.version));
    const view = (await deploymentViews(store.db, [row]))[0]!;
    return created ? c.json(view, 201) : c.json(view, 200);
  })
  .openapi(remove, async (c) => {
    const { name } = c.req.valid("param");
    await deleteDeclared(c.var.deps.store, DEPLOYMENTS, name, c.req.header("if-match"));
    return c.body(null, 204);
  });
