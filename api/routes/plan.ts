import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { Capacity } from "../../shared/schemas/plan.js";
import { requireAdmin } from "../auth.js";
import type { AppEnv } from "../deps.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";
import { readCapacity } from "../views/capacity.js";

const get = createRoute({
  method: "get",
  path: "/api/v1/plan",
  operationId: "getPlan",
  tags: ["replicas"],
  summary:
    "Devices by class (total / free / used / unavailable and why) and how many more replicas of each model profile fit, and where",
  security: adminSecurity,
  middleware: requireAdmin,
  responses: { 200: jsonResponse(Capacity, "The fleet's capacity now"), ...errorResponses(401, 403) },
});

export const planRoutes = new OpenAPIHono<AppEnv>().openapi(get, async (c) => {
  const deps = c.var.deps;
  return c.json(await readCapacity(deps, deps.now()), 200);
});
