// What a draining agent asks when its engine does not say how many requests it still works on: the router's own
// count of requests outstanding to that endpoint, on this instance.
import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { RouterInflight } from "../../shared/schemas/agent.js";
import { NodeId } from "../../shared/schemas/common.js";
import { z } from "../../shared/z.js";
import { requireOwnNode } from "../auth.js";
import type { AppDeps, AppEnv } from "../deps.js";
import { errorResponses, jsonResponse, nodeSecurity } from "../openapi.js";

const inflight = createRoute({
  method: "get",
  path: "/api/v1/agents/{node}/inflight",
  operationId: "getRouterInflight",
  tags: ["agents"],
  summary: "Requests the router has outstanding to one of the node's engines (for a drain)",
  description:
    "The count of this API instance's router: with several instances behind a load balancer it is this one's share. " +
    "An agent asks when its engine's own metrics do not say (an engine started without them).",
  security: nodeSecurity,
  middleware: requireOwnNode,
  request: {
    params: z.object({ node: NodeId.openapi({ param: { name: "node", in: "path" } }) }),
    query: z.object({
      port: z.coerce
        .number()
        .int()
        .min(1)
        .max(65535)
        .openapi({ param: { name: "port", in: "query" }, description: "the engine's HTTP port" }),
    }),
  },
  responses: { 200: jsonResponse(RouterInflight, "The router's count"), ...errorResponses(400, 401, 403, 409) },
});

/** The router's URL of an endpoint on `addr`:`port` (as its endpoint table writes it). */
const endpointUrl = (addr: string, port: number) => `http://${addr.includes(":") ? `[${addr}]` : addr}:${port}`;

const countOf = (deps: AppDeps, url: string) => deps.router?.balancer.inflight(url) ?? null;

export const agentInflightRoutes = new OpenAPIHono<AppEnv>().openapi(inflight, async (c) => {
  const { port } = c.req.valid("query");
  return c.json({ port, inflight: countOf(c.var.deps, endpointUrl(c.var.node.mgmtAddr, port)) }, 200);
});
