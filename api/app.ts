import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { routePath } from "hono/route";
import { limitBodies } from "./body-limit.js";
import { consoleRoutes } from "./console/routes.js";
import type { AppDeps, AppEnv } from "./deps.js";
import { docsRoutes } from "./docs.js";
import { onError, problem } from "./errors.js";
import type { Log } from "./log.js";
import { serveMetrics } from "./metrics/endpoint.js";
import { validationHook } from "./openapi.js";
import { placeSoon, WRITE_ALLOWANCE_MS } from "./placement/trigger.js";
import { requestIdOf } from "./request-id.js";
import { routerRoutes } from "./router/routes.js";
import { agentInflightRoutes } from "./routes/agent-inflight.js";
import { agentPeerRoutes } from "./routes/agent-peers.js";
import { agentRoutes } from "./routes/agents.js";
import { apiKeyRoutes } from "./routes/api-keys.js";
import { assignmentRoutes } from "./routes/assignments.js";
import { deploymentRoutes } from "./routes/deployments.js";
import { eventRoutes } from "./routes/events.js";
import { healthRoutes } from "./routes/health.js";
import { joinTokenRoutes } from "./routes/join-tokens.js";
import { modelRoutes } from "./routes/models.js";
import { nodeRoutes } from "./routes/nodes.js";
import { nvlinkRoutes } from "./routes/nvlink.js";
import { planRoutes } from "./routes/plan.js";
import { replicaRoutes } from "./routes/replicas.js";
import { tokenRoutes } from "./routes/tokens.js";
import { usageRoutes } from "./routes/usage.js";

/**
 * Compiles a route path (`/api/v1/nodes/:id/cordon`) to a matcher, for telling 405 from 404. It matches exactly what
 * the router does: a trailing slash is another path (404), never a 405 whose `Allow` names the method that was sent.
 */
function pathMatcher(path: string): RegExp {
  const body = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+");
  return new RegExp(`^${body}$`);
}

/** One access-log line's fields: never a token, only its name and id (or the node it belongs to). */
function accessFields(c: Context<AppEnv>, requestId: string, began: number) {
  const p = c.get("principal");
  const who =
    p?.kind === "admin"
      ? { token: p.tokenName ?? p.tokenId, tokenId: p.tokenId }
      : p?.kind === "node"
        ? { nodeId: p.nodeId }
        : p?.kind === "join"
          ? { token: "join token" }
          : {};
  return {
    requestId,
    method: c.req.method,
    route: routePath(c),
    path: c.req.path,
    status: c.res.status,
    ms: Math.round((performance.now() - began) * 10) / 10,
    ...who,
  };
}

/** The access line of a request answered later (a held long-poll): its status and time once it is answered. */
function logWhenAnswered(log: Log, answered: Promise<number>, fields: ReturnType<typeof accessFields>, began: number) {
  void answered.then((status) =>
    log.info("request", { ...fields, status, ms: Math.round((performance.now() - began) * 10) / 10 }),
  );
}

/** The control API over the given dependencies; it holds no state of its own. */
/**
 * How far the placement after a write to `path` may run ahead of half of the instance's time: an operator's write a
 * little (placement/trigger.ts), an agent's call (registration, heartbeat, report) not at all.
 */
export const placementAllowance = (path: string): number =>
  path.startsWith("/api/v1/agents/") ? 0 : WRITE_ALLOWANCE_MS;

export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

  app.use("*", async (c, next) => {
    const id = requestIdOf(c.req.header("x-request-id"));
    c.set("requestId", id);
    c.set("deps", deps);
    const began = performance.now();
    // set before the response exists, it goes into the one the route builds: set on a finished response, Hono copies
    // that response into a new one whose body is a stream, which @hono/node-server then writes the slow way
    c.header("x-request-id", id);
    await next();
    const held = c.get("held");
    if (held) return void logWhenAnswered(deps.log, held, accessFields(c, id, began), began);
    // a route that answers with a Response of its own does not carry it
    if (!c.res.headers.has("x-request-id")) c.header("x-request-id", id);
    if (c.req.path.startsWith("/api/")) deps.log.info("request", accessFields(c, id, began));
  });
  app.use(
    "/api/*",
    limitBodies(deps.settings.maxBodyBytes, (c) =>
      problem(c, 413, "payload_too_large", `request body larger than ${deps.settings.maxBodyBytes} bytes`),
    ),
  );
  // A successful write may change placement: place now (in the background) and wake the polls it concerns, rather
  // than waiting for the next poll to arrive — every agent may be parked in a long-poll.
  app.use("/api/*", async (c, next) => {
    await next();
    if (c.req.method === "GET" || c.res.status >= 300 || c.req.path.endsWith("/assignments")) return;
    placeSoon(deps, (work) => c.executionCtx.waitUntil(work), "a write", placementAllowance(c.req.path));
  });

  app.route("/", healthRoutes);
  app.route("/", tokenRoutes);
  app.route("/", joinTokenRoutes);
  app.route("/", agentRoutes);
  app.route("/", assignmentRoutes);
  app.route("/", agentInflightRoutes);
  app.route("/", agentPeerRoutes);
  app.route("/", nodeRoutes);
  app.route("/", eventRoutes);
  app.route("/", modelRoutes);
  app.route("/", deploymentRoutes);
  app.route("/", replicaRoutes);
  app.route("/", planRoutes);
  app.route("/", nvlinkRoutes);
  app.route("/", apiKeyRoutes);
  app.route("/", usageRoutes);
  app.route("/", routerRoutes());
  app.route("/", consoleRoutes);
  app.get("/metrics", serveMetrics);

  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description:
      "An admin token (`llmgw_adm_…`): printed at first start, or LLMGW_ADMIN_TOKEN, or from POST /api/v1/tokens",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "joinToken", {
    type: "http",
    scheme: "bearer",
    description: "A join token (`llmgw_join_…`) from POST /api/v1/join-tokens: registers new nodes only",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "nodeToken", {
    type: "http",
    scheme: "bearer",
    description: "A node token (`llmgw_node_…`) returned at registration: reaches only that node's agent endpoints",
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "llmgw control API",
      version: deps.settings.version,
      description:
        "Inventory, tokens and the agents' endpoints of llmgw. Errors are application/problem+json (RFC 9457).",
      license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
    },
    servers: [{ url: "/", description: "this server" }],
    tags: [
      { name: "health", description: "Liveness and readiness probes" },
      { name: "tokens", description: "Admin and join tokens" },
      { name: "agents", description: "Endpoints the node agents call, with their node token" },
      { name: "nodes", description: "The fleet's nodes and what operators do to them" },
      { name: "events", description: "What happened, newest first" },
      {
        name: "models",
        description: "The catalog: models and the profiles they can run with (declarative: PUT to create or replace)",
      },
      { name: "replicas", description: "What placement decided: replicas, their shards, nodes and devices" },
      {
        name: "deployments",
        description: "What should run: N replicas of a model in a pool (declarative: PUT to create or replace)",
      },
      {
        name: "api-keys",
        description:
          "Inference API keys for /v1/*: model allow-lists, per-minute limits, expiry (declarative: PUT to create or replace)",
      },
      { name: "usage", description: "Requests and tokens the router counted, per API key, model and hour" },
    ],
  });
  app.route("/", docsRoutes(deps.docsScript));

  const routes = () => app.routes.map((r) => ({ method: r.method.toUpperCase(), match: pathMatcher(r.path) }));
  app.notFound((c) => {
    const path = c.req.path;
    const allowed = [
      ...new Set(
        routes()
          .filter((r) => r.method !== "ALL" && r.match.test(path))
          .map((r) => r.method),
      ),
    ];
    if (allowed.length && !allowed.includes(c.req.method)) {
      return problem(
        c,
        405,
        "method_not_allowed",
        `${c.req.method} is not allowed on ${path}; use ${allowed.join(", ")}`,
        undefined,
        {
          allow: allowed.join(", "),
        },
      );
    }
    const bare = path.replace(/\/+$/, "");
    const hint =
      bare && bare !== path && routes().some((r) => r.method !== "ALL" && r.match.test(bare))
        ? ` (${bare}, without the trailing slash, is one)`
        : "";
    return problem(c, 404, "not_found", `no route ${c.req.method} ${path}${hint}`);
  });
  app.onError((err, c) => onError(err, c, deps.log));
  return app;
}

export type App = ReturnType<typeof createApp>;
