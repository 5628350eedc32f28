import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { NodeId } from "../../shared/schemas/common.js";
import { Event, EventType } from "../../shared/schemas/event.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import { listEvents } from "../db/events.js";
import type { AppEnv } from "../deps.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";

const Cursor = z.coerce.number().int().nonnegative();
const EventsQuery = z.object({
  node: NodeId.optional().openapi({ param: { name: "node", in: "query" }, description: "only this node's events" }),
  type: EventType.optional().openapi({ param: { name: "type", in: "query" } }),
  after: Cursor.optional().openapi({
    param: { name: "after", in: "query" },
    description: "only events with a larger id (to follow)",
  }),
  before: Cursor.optional().openapi({
    param: { name: "before", in: "query" },
    description: "only events with a smaller id (to page back)",
  }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .openapi({ param: { name: "limit", in: "query" } }),
});

const list = createRoute({
  method: "get",
  path: "/api/v1/events",
  operationId: "listEvents",
  tags: ["events"],
  summary: "Registrations, node state changes, fabric, IMEX and port transitions, newest first",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  request: { query: EventsQuery },
  responses: {
    200: jsonResponse(z.object({ items: z.array(Event) }), "Events, newest first"),
    ...errorResponses(400, 401, 403),
  },
});

export const eventRoutes = new OpenAPIHono<AppEnv>().openapi(list, async (c) => {
  const q = c.req.valid("query");
  const items = await listEvents(c.var.deps.store.db, {
    nodeId: q.node,
    type: q.type,
    after: q.after,
    before: q.before,
    limit: q.limit,
  });
  return c.json({ items }, 200);
});
