import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { ReplicaView } from "../../shared/schemas/replica.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import { replicas } from "../db/schema.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";
import { listReplicaViews, replicaViews } from "../views/replicas.js";

const common = { tags: ["replicas"], security: adminSecurity, middleware: requireAdmin };

const list = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/replicas",
  operationId: "listReplicas",
  summary: "Placed replicas: shards, nodes, devices, rank 0's endpoint, state",
  request: {
    query: z.object({
      deployment: z
        .string()
        .max(63)
        .optional()
        .openapi({ param: { name: "deployment", in: "query" } }),
    }),
  },
  responses: {
    200: jsonResponse(z.object({ items: z.array(ReplicaView) }), "Replicas, oldest first"),
    ...errorResponses(400, 401, 403),
  },
});

const get = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/replicas/{id}",
  operationId: "getReplica",
  summary: "One replica",
  request: {
    params: z.object({
      id: z
        .string()
        .max(64)
        .openapi({ param: { name: "id", in: "path" }, example: "r12" }),
    }),
  },
  responses: { 200: jsonResponse(ReplicaView, "The replica"), ...errorResponses(400, 401, 403, 404) },
});

export const replicaRoutes = new OpenAPIHono<AppEnv>()
  .openapi(list, async (c) => {
    const { deployment } = c.req.valid("query");
    return c.json({ items: await listReplicaViews(c.var.deps.store.db, deployment) }, 200);
  })
  .openapi(get, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.var.deps.store.db;
    const rows = await db.select().from(replicas).where(eq(replicas.id, id));
    if (!rows.length) throw new ApiError(404, "not_found", `no replica ${id}`);
    return c.json((await replicaViews(db, rows))[0]!, 200);
  });
