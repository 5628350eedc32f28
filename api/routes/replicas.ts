import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { and, asc, eq, inArray } from "drizzle-orm";
import { labelOfDeviceNumber } from "../../shared/classes.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import { ReplicaView } from "../../shared/schemas/replica.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import type { Q } from "../db/client.js";
import { replicas, shards, shardStatus } from "../db/schema.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";

/** Replicas with their shards, devices, endpoint and state. */
export async function replicaViews(q: Q, rows: (typeof replicas.$inferSelect)[]) {
  if (!rows.length) return [];
  const shardRows = await q
    .select({ id: shards.id, replicaId: shards.replicaId, nodeId: shards.nodeId, rank: shards.rank, spec: shards.spec, state: shardStatus.state, message: shardStatus.message })
    .from(shards)
    .leftJoin(shardStatus, and(eq(shardStatus.nodeId, shards.nodeId), eq(shardStatus.shardId, shards.id)))
    .where(inArray(shards.replicaId, rows.map((r) => r.id)))
    .orderBy(asc(shards.rank));
  return rows.map((r) => {
    const mine = shardRows.filter((s) => s.replicaId === r.id).map((s) => ({ ...s, spec: JSON.parse(s.spec) as StartShard }));
    const leader = mine.find((s) => s.rank === 0);
    const state = mine.some((s) => s.state === "failed") ? "failed" : mine.length && mine.every((s) => s.state === "ready") ? "ready" : "starting";
    return {
      id: r.id,
      deployment: r.deployment,
      profile: r.profile,
      fingerprint: r.fingerprint,
      createdAt: r.createdAt,
      state: state as "ready" | "starting" | "failed",
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
      })),
    };
  });
}

const common = { tags: ["replicas"], security: adminSecurity, middleware: requireAdmin };

const list = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/replicas",
  operationId: "listReplicas",
  summary: "Placed replicas: shards, nodes, devices, rank 0's endpoint, state",
  request: { query: z.object({ deployment: z.string().max(63).optional().openapi({ param: { name: "deployment", in: "query" } }) }) },
  responses: { 200: jsonResponse(z.object({ items: z.array(ReplicaView) }), "Replicas, oldest first"), ...errorResponses(400, 401, 403) },
});

const get = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/replicas/{id}",
  operationId: "getReplica",
  summary: "One replica",
  request: { params: z.object({ id: z.string().max(64).openapi({ param: { name: "id", in: "path" }, example: "r12" }) }) },
  responses: { 200: jsonResponse(ReplicaView, "The replica"), ...errorResponses(400, 401, 403, 404) },
});

export const replicaRoutes = new OpenAPIHono<AppEnv>()
  .openapi(list, async (c) => {
    const { deployment } = c.req.valid("query");
    const db = c.var.deps.store.db;
    const rows = await db.select().from(replicas).where(deployment ? eq(replicas.deployment, deployment) : undefined).orderBy(asc(replicas.seq));
    return c.json({ items: await replicaViews(db, rows) }, 200);
  })
  .openapi(get, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.var.deps.store.db;
    const rows = await db.select().from(replicas).where(eq(replicas.id, id));
    if (!rows.length) throw new ApiError(404, "not_found", `no replica ${id}`);
    return c.json((await replicaViews(db, rows))[0]!, 200);
  });
