// /v1/* in the Hono app. On Node the HTTP server hands /v1/* to the router's own handler (handler.ts) before the app
// sees it; what reaches here is a build without a router (the Worker), which says so in OpenAI's error shape.
import { Hono } from "hono";
import type { AppEnv } from "../deps.js";
import { openAiError } from "./errors.js";

/** The /v1 fallback, mounted by createApp. */
export function routerRoutes() {
  const app = new Hono<AppEnv>();
  app.all("/v1/*", (c) => c.json(openAiError("this deployment of llmgw has no router (run `llmgw serve`)", "service_unavailable", "router_unavailable"), 503));
  return app;
}
