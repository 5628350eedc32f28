import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { NodeId } from "../../shared/schemas/common.js";
import { Node, NodeState, NodeSummary } from "../../shared/schemas/node.js";
import { z } from "../../shared/z.js";
import { actorOf, auditEvent } from "../audit.js";
import { requireAdmin } from "../auth.js";
import { bumpGeneration } from "../db/cluster.js";
import { insertEvents } from "../db/events.js";
import { classCounts, deleteNode, findNode, setAdminState } from "../db/nodes.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";
import { listNodeSummaries, NODE_ACTIONS, type NodeAction, nodeDetail, nodeSummary } from "../views/nodes.js";

const IdParam = z.object({ id: NodeId.openapi({ param: { name: "id", in: "path" } }) });
const ListQuery = z.object({
  state: NodeState.optional().openapi({ param: { name: "state", in: "query" } }),
  pool: z
    .string()
    .max(256)
    .optional()
    .openapi({ param: { name: "pool", in: "query" } }),
});

const list = createRoute({
  method: "get",
  path: "/api/v1/nodes",
  operationId: "listNodes",
  tags: ["nodes"],
  summary: "List nodes with their state and devices by class",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  request: { query: ListQuery },
  responses: {
    200: jsonResponse(z.object({ items: z.array(NodeSummary) }), "Nodes by id"),
    ...errorResponses(400, 401, 403),
  },
});

const get = createRoute({
  method: "get",
  path: "/api/v1/nodes/{id}",
  operationId: "getNode",
  tags: ["nodes"],
  summary: "One node: state, last heartbeat, devices, shard states and its full inventory",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  request: { params: IdParam },
  responses: { 200: jsonResponse(Node, "The node"), ...errorResponses(400, 401, 403, 404) },
});

const remove = createRoute({
  method: "delete",
  path: "/api/v1/nodes/{id}",
  operationId: "deleteNode",
  tags: ["nodes"],
  summary: "Forget a node: its row, devices and token go; its agent must register again with a join token",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  request: { params: IdParam },
  responses: { 204: { description: "Forgotten" }, ...errorResponses(400, 401, 403, 404) },
});

/** POST /api/v1/nodes/{id}/<verb>: sets what an operator wants of the node and records an event. */
function actionRoute(verb: NodeAction) {
  return createRoute({
    method: "post",
    path: `/api/v1/nodes/{id}/${verb}`,
    operationId: `${verb}Node`,
    tags: ["nodes"],
    summary: NODE_ACTIONS[verb].summary,
    security: adminSecurity,
    middleware: [requireAdmin] as const,
    request: { params: IdParam },
    responses: { 200: jsonResponse(NodeSummary, "The node after the change"), ...errorResponses(400, 401, 403, 404) },
  });
}

const app = new OpenAPIHono<AppEnv>()
  .openapi(list, async (c) => {
    const { state, pool } = c.req.valid("query");
    const { store, now, settings } = c.var.deps;
    const t = now();
    const [rows, classes] = await Promise.all([listNodeSummaries(store.db, pool), classCounts(store.db)]);
    const items = rows
      .map((r) => nodeSummary(r, classes.get(r.id) ?? {}, t, settings.nodeLostAfterS))
      .filter((n) => !state || n.state === state);
    return c.json({ items }, 200);
  })
  .openapi(get, async (c) => {
    const { id } = c.req.valid("param");
    const { store, now, settings } = c.var.deps;
    const row = await findNode(store.db, id);
    if (!row) throw new ApiError(404, "not_found", `no node ${id}`);
    return c.json(await nodeDetail(store.db, row, now(), settings.nodeLostAfterS), 200);
  })
  .openapi(remove, async (c) => {
    const { id } = c.req.valid("param");
    const { store, now } = c.var.deps;
    await store.write(async (tx) => {
      if (!(await deleteNode(tx, id))) throw new ApiError(404, "not_found", `no node ${id}`);
      const by = actorOf(c.var.principal);
      await insertEvents(tx, now(), [
        auditEvent("node_deleted", { kind: "node", name: id }, by, `${id} was deleted`, {}, id),
      ]);
      await bumpGeneration(tx);
    });
    return c.body(null, 204);
  });

for (const verb of Object.keys(NODE_ACTIONS) as NodeAction[]) {
  app.openapi(actionRoute(verb), async (c) => {
    const { id } = c.req.valid("param");
    const { store, now, settings } = c.var.deps;
    const { adminState, event } = NODE_ACTIONS[verb];
    const t = now();
    const row = await store.write(async (tx) => {
      const after = await setAdminState(tx, id, adminState, event, t, actorOf(c.var.principal));
      if (!after) throw new ApiError(404, "not_found", `no node ${id}`);
      return after;
    });
    const classes = (await classCounts(store.db, id)).get(id) ?? {};
    return c.json(nodeSummary(row, classes, t, settings.nodeLostAfterS), 200);
  });
}

export const nodeRoutes = app;
