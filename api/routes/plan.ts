import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { Capacity } from "../../shared/schemas/plan.js";
import { requireAdmin } from "../auth.js";
import type { AppEnv } from "../deps.js";
import { readPlacementRows } from "../placement/apply.js";
import { classCapacity, profileCapacity } from "../placement/capacity.js";
import { planInput } from "../placement/input.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";


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
