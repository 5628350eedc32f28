import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import type { AppEnv } from "../deps.js";
import { readPlacementRows } from "../placement/apply.js";
import { classCapacity, profileCapacity } from "../placement/capacity.js";
import { planInput } from "../placement/input.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";

const Capacity = z
  .object({
    classes: z.array(
      z.object({
        class: z.string(),
        total: z.number().int(),
        free: z.number().int(),
        used: z.number().int(),
        unavailable: z.array(z.object({ count: z.number().int(), reason: z.string() })),
      }),
    ),
    profiles: z.array(
      z.object({
        model: z.string(),
        profile: z.string(),
        gpuClass: z.string(),
        pool: z.string(),
        fits: z.number().int().openapi({ description: "how many more replicas of this profile fit now (a MIG class: one instance each)" }),
        nodes: z.record(z.string(), z.number().int()).openapi({ description: "where they would go: node → shards" }),
        reason: z.string().optional().openapi({ description: "why none fits" }),
      }),
    ),
  })
  .openapi("Capacity");

const get = createRoute({
  method: "get",
  path: "/api/v1/plan",
  operationId: "getPlan",
  tags: ["replicas"],
  summary: "Devices by class (total / free / used / unavailable and why) and how many more replicas of each model profile fit, and where",
  security: adminSecurity,
  middleware: requireAdmin,
  responses: { 200: jsonResponse(Capacity, "The fleet's capacity now"), ...errorResponses(401, 403) },
});

export const planRoutes = new OpenAPIHono<AppEnv>().openapi(get, async (c) => {
  const { store, now, settings } = c.var.deps;
  const input = planInput({ ...(await readPlacementRows(store.db, c.var.deps.factsCache)), nextSeq: 1, now: now(), lostAfterS: settings.nodeLostAfterS });
  return c.json({ classes: classCapacity(input), profiles: profileCapacity(input) }, 200);
});
