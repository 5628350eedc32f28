import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { and, asc, eq, gte, lt, type SQL } from "drizzle-orm";
import { HOUR_MS, UsageReport } from "../../shared/schemas/usage.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import { usage } from "../db/schema.js";
import type { AppEnv } from "../deps.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";

const Ms = z.coerce.number().int().nonnegative();
const UsageQuery = z.object({
  key: z
    .string()
    .min(1)
    .max(63)
    .optional()
    .openapi({ param: { name: "key", in: "query" }, description: "only this API key's usage", example: "team-search" }),
  model: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .openapi({
      param: { name: "model", in: "query" },
      description: "only this served model's usage",
      example: "meta-llama/Llama-3.1-8B-Instruct",
    }),
  since: Ms.optional().openapi({
    param: { name: "since", in: "query" },
    description: "only hours from this one on (Unix ms, rounded down to its hour)",
    example: 1764518400000,
  }),
  until: Ms.optional().openapi({
    param: { name: "until", in: "query" },
    description: "only hours that start before this time (Unix ms)",
    example: 1764604800000,
  }),
});

const report = createRoute({
  method: "get",
  path: "/api/v1/usage",
  operationId: "getUsage",
  tags: ["usage"],
  summary: "Requests and tokens the router counted, per API key, served model and hour, with totals",
  description:
    "Each instance of the router sums usage in memory and writes it every 10 s, so the last seconds may not be here yet. " +
    "Usage of deleted keys stays.",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  request: { query: UsageQuery },
  responses: {
    200: jsonResponse(UsageReport, "Usage rows by hour, key and model, and their sums"),
    ...errorResponses(400, 401, 403),
  },
});

export const usageRoutes = new OpenAPIHono<AppEnv>().openapi(report, async (c) => {
  const q = c.req.valid("query");
  const where: SQL[] = [];
  if (q.key !== undefined) where.push(eq(usage.keyName, q.key));
  if (q.model !== undefined) where.push(eq(usage.model, q.model));
  if (q.since !== undefined) where.push(gte(usage.hourStart, Math.floor(q.since / HOUR_MS) * HOUR_MS));
  if (q.until !== undefined) where.push(lt(usage.hourStart, q.until));
  const rows = await c.var.deps.store.db
    .select()
    .from(usage)
    .where(and(...where))
    .orderBy(asc(usage.hourStart), asc(usage.keyName), asc(usage.model));
  const totals = { requests: 0, promptTokens: 0, completionTokens: 0 };
  const items = rows.map((r) => {
    totals.requests += r.requests;
    totals.promptTokens += r.promptTokens;
    totals.completionTokens += r.completionTokens;
    return {
      key: r.keyName,
      model: r.model,
      hourStart: r.hourStart,
      requests: r.requests,
      promptTokens: r.promptTokens,
      completionTokens: r.completionTokens,
    };
  });
  return c.json({ items, totals }, 200);
});
