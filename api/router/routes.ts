// /v1/* in the Hono app. On Node the HTTP server hands /v1/* to the router's own node:http handler (handler.ts) before
// the app sees it; on the Worker the app serves it with the fetch router (fetch-handler.ts). A build with neither says
// so in OpenAI's error shape.
import { Hono } from "hono";
import type { AppEnv } from "../deps.js";
import { openAiError } from "./errors.js";

/** The /v1 routes, mounted by createApp. */
export function routerRoutes() {
  const app = new Hono<AppEnv>();
  app.all("/v1/*", (c) => {
    const { fetchRouter } = c.var.deps;
    if (!fetchRouter)
      return c.json(
        openAiError(
          "this deployment of llmgw has no router (run `llmgw serve`)",
          "service_unavailable",
          "router_unavailable",
        ),
        503,
      );
    return fetchRouter(c.req.raw, c.var.requestId, (work) => c.executionCtx.waitUntil(work));
  });
  return app;
}
