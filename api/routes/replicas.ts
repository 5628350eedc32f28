import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { failureText } from "../../shared/schemas/failure.js";
import { ReplicaLogs, ReplicaView } from "../../shared/schemas/replica.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import { replicas, shardStatus } from "../db/schema.js";
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

const ReplicaId = z.object({
  id: z
    .string()
    .max(64)
    .openapi({ param: { name: "id", in: "path" }, example: "r12" }),
});

const get = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/replicas/{id}",
  operationId: "getReplica",
  summary: "One replica",
  request: { params: ReplicaId },
  responses: { 200: jsonResponse(ReplicaView, "The replica"), ...errorResponses(400, 401, 403, 404) },
});

const logs = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/replicas/{id}/logs",
  operationId: "getReplicaLogs",
  summary: "The last failure of each of a replica's shards, with its engine log's last lines",
  description:
    "Also for a replica repair has freed (its shards' last reports are kept): what `llmgw ctl logs <replica>` prints.",
  request: { params: ReplicaId },
  responses: {
    200: jsonResponse(ReplicaLogs, "Each shard's last failure"),
    ...errorResponses(400, 401, 403, 404),
  },
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
  })
  .openapi(logs, async (c) => {
    const { id } = c.req.valid("param");
    const rows = await c.var.deps.store.db
      .select()
      .from(shardStatus)
      .where(eq(shardStatus.replicaId, id))
      .orderBy(asc(shardStatus.shardId));
    if (!rows.length) throw new ApiError(404, "not_found", `no replica ${id} has reported (or it was never placed)`);
    const shards = rows.map((r) => ({
      shardId: r.shardId,
      nodeId: r.nodeId,
      state: r.state,
      failure: r.failure ?? null,
      text: r.failure ? failureText(r.failure) : null,
    }));
    return c.json({ replica: id, shards }, 200);
  });
