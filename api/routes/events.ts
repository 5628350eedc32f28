import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { NodeId } from "../../shared/schemas/common.js";
import { Event, EventType } from "../../shared/schemas/event.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import { listEvents } from "../db/events.js";
import type { AppEnv } from "../deps.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";

const Cursor = z.coerce.number().int().nonnegative();
const Since = z
  .string()
  .max(64)
  .transform((v, ctx) => {
    const ms = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (Number.isNaN(ms)) ctx.addIssue({ code: "custom", message: "epoch milliseconds or an ISO 8601 date-time" });
    return ms;
  });
const EventsQuery = z.object({
  node: NodeId.optional().openapi({ param: { name: "node", in: "query" }, description: "only this node's events" }),
  type: EventType.optional().openapi({ param: { name: "type", in: "query" } }),
  actor: z
    .string()
    .max(256)
    .optional()
    .openapi({
      param: { name: "actor", in: "query" },
      description: "only changes made by this admin token (its id or its name), over the API or the console",
      example: "tok_3kq8Zp2v",
    }),
  kind: z
    .string()
    .max(64)
    .optional()
    .openapi({
      param: { name: "kind", in: "query" },
      description:
        "only audit events about this kind of thing: model, deployment, api_key, node, admin_token, join_token, session",
      example: "model",
    }),
  audit: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      param: { name: "audit", in: "query" },
      description: "`true`: only audit events (changes made by an operator, and console logins)",
    }),
  since: Since.optional().openapi({
    param: { name: "since", in: "query" },
    description: "only events at or after this time: epoch milliseconds or an ISO 8601 date-time",
    example: "2026-11-30T00:00:00Z",
  }),
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
  summary: "Registrations, node state changes, fabric, IMEX and port transitions, and the audit trail, newest first",
  description:
    "Audit events (changes to models, deployments and API keys, node actions, token and key creation, revocation and rotation, console logins) carry `actor` (the admin token's id, name and role), `kind` and `name`; declarations add `data.diff`. Filters combine: `actor`, `kind`, `since`, `audit`, `node`, `type`. Events older than `LLMGW_EVENTS_RETENTION_DAYS` are deleted.",
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
    actor: q.actor,
    kind: q.kind,
    since: q.since,
    audit: q.audit === "true",
    after: q.after,
    before: q.before,
    limit: q.limit,
  });
  return c.json({ items }, 200);
});
