import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { Model, ModelSpec, ResourceName } from "../../shared/schemas/model.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import type { Q } from "../db/client.js";
import { deployments, models } from "../db/schema.js";
import { type DeclaredKind, deleteDeclared, putDeclared } from "../declarative.js";
import { etagOf, metadataOf, type StoredResource } from "../db/resources.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonBody, jsonResponse } from "../openapi.js";
import { IfMatch, PutConditions, putBody, sameName, writtenSpec } from "./resource-shapes.js";

const NameParam = z.object({ name: ResourceName.openapi({ param: { name: "name", in: "path" }, example: "llama-3.1-70b" }) });
const PutModel = putBody(ModelSpec, "PutModel");

/** Models with the deployments that name them. */
async function modelViews(q: Q, rows: StoredResource[]) {
  const uses = await q.select({ name: deployments.name, model: deployments.model }).from(deployments).orderBy(asc(deployments.name));
  return rows.map((r) => ({
    name: r.name,
    spec: JSON.parse(r.spec) as ModelSpec,
    status: { deployments: uses.filter((u) => u.model === r.name).map((u) => u.name) },
    metadata: metadataOf(r),
  }));
}

const MODELS: DeclaredKind<StoredResource> = {
  kind: "model",
  find: async (q, name) => (await q.select().from(models).where(eq(models.name, name)))[0],
  save: async (tx, next) => {
    await tx.insert(models).values(next).onConflictDoUpdate({ target: models.name, set: next });
    return next;
  },
  remove: async (tx, name) => {
    await tx.delete(models).where(eq(models.name, name));
  },
};

const common = { tags: ["models"], security: adminSecurity, middleware: requireAdmin };

const list = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/models",
  operationId: "listModels",
  summary: "List models",
  responses: { 200: jsonResponse(z.object({ items: z.array(Model) }), "Models by name"), ...errorResponses(401, 403) },
});

const get = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/models/{name}",
  operationId: "getModel",
  summary: "Read a model; `spec` is exactly as written",
  request: { params: NameParam },
  responses: { 200: jsonResponse(Model, "The model (ETag header: its version)"), ...errorResponses(400, 401, 403, 404) },
});

const put = createRoute({
  ...common,
  method: "put",
  path: "/api/v1/models/{name}",
  operationId: "putModel",
  summary: "Create or replace a model",
  description:
    "The body is `{spec}` (`name`, `status` and `metadata` may be sent back as read; `status` and `metadata` are ignored). " +
    "A PUT that changes nothing keeps the version. `If-Match` makes it conditional (412 when the ETag is not current).",
  request: { params: NameParam, headers: PutConditions, body: jsonBody(PutModel) },
  responses: { 200: jsonResponse(Model, "Replaced (or unchanged)"), 201: jsonResponse(Model, "Created"), ...errorResponses(400, 401, 403, 412, 413, 415) },
});

const remove = createRoute({
  ...common,
  method: "delete",
  path: "/api/v1/models/{name}",
  operationId: "deleteModel",
  summary: "Delete a model; deployments that name it stay, pending, until it is declared again",
  request: { params: NameParam, headers: IfMatch },
  responses: { 204: { description: "Deleted" }, ...errorResponses(400, 401, 403, 404, 412) },
});

export const modelRoutes = new OpenAPIHono<AppEnv>()
  .openapi(list, async (c) => {
    const db = c.var.deps.store.db;
    return c.json({ items: await modelViews(db, await db.select().from(models).orderBy(asc(models.name))) }, 200);
  })
  .openapi(get, async (c) => {
    const { name } = c.req.valid("param");
    const db = c.var.deps.store.db;
    const [row] = await db.select().from(models).where(eq(models.name, name));
    if (!row) throw new ApiError(404, "not_found", `no model ${name}`);
    c.header("etag", etagOf(row.version));
    return c.json((await modelViews(db, [row]))[0]!, 200);
  })
  .openapi(put, async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    sameName(name, body.name);
    const { store, now } = c.var.deps;
    const { row, created } = await putDeclared(store, MODELS, { name, written: await writtenSpec(c), ifMatch: c.req.header("if-match"), ifNoneMatch: c.req.header("if-none-match"), now: now() });
    c.header("etag", etagOf(row.version));
    const view = (await modelViews(store.db, [row]))[0]!;
    return created ? c.json(view, 201) : c.json(view, 200);
  })
  .openapi(remove, async (c) => {
    const { name } = c.req.valid("param");
    await deleteDeclared(c.var.deps.store, MODELS, name, c.req.header("if-match"));
    return c.body(null, 204);
  });
