import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { z } from "../../shared/z.js";
import { describeDbError } from "../db/db-errors.js";
import { migrationStatus } from "../db/migration-status.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { errorResponses, jsonResponse } from "../openapi.js";

const Health = z
  .object({ status: z.literal("ok"), version: z.string().openapi({ example: "0.1.0" }) })
  .openapi("Health");
const Readiness = z
  .object({
    status: z.literal("ready"),
    checks: z.object({ database: z.literal("ok"), migrations: z.literal("current") }),
  })
  .openapi("Readiness");

const healthz = createRoute({
  method: "get",
  path: "/healthz",
  operationId: "getHealth",
  tags: ["health"],
  summary: "Liveness: the process answers",
  security: [],
  responses: { 200: jsonResponse(Health, "The process is up") },
});

const readyz = createRoute({
  method: "get",
  path: "/readyz",
  operationId: "getReadiness",
  tags: ["health"],
  summary: "Readiness: the database answers, takes writes and has every migration this build needs",
  description:
    "503 `unavailable` names the cause: the database unreachable (connection refused, DNS name not found, " +
    "authentication failed …), a write refused in the last minute for lack of space or a read-only file, or " +
    "migrations pending.",
  security: [],
  responses: {
    200: jsonResponse(Readiness, "Ready to serve"),
    ...errorResponses(503),
  },
});

export const healthRoutes = new OpenAPIHono<AppEnv>()
  .openapi(healthz, (c) => c.json({ status: "ok" as const, version: c.var.deps.settings.version }, 200))
  .openapi(readyz, async (c) => {
    const { store, migrations } = c.var.deps;
    try {
      await store.db.run(sql`SELECT 1`);
    } catch (e) {
      const stale = c.var.deps.router?.table.staleness();
      const router = stale
        ? `; the router keeps serving from its endpoint table of ${Math.round((c.var.deps.now() - stale.since) / 1000)} s ago`
        : "";
      throw new ApiError(503, "unavailable", `database unreachable: ${describeDbError(e)}${router}`);
    }
    const refused = store.writeFailure?.();
    if (refused)
      throw new ApiError(
        503,
        "unavailable",
        `database refuses writes: ${refused.cause} (last at ${new Date(refused.at).toISOString()})`,
      );
    const m = await migrationStatus(store.db, migrations);
    if (!m.current)
      throw new ApiError(
        503,
        "unavailable",
        `database schema is behind this build: pending migrations ${m.pending.join(", ")}; run \`llmgw migrate\``,
      );
    return c.json(
      { status: "ready" as const, checks: { database: "ok" as const, migrations: "current" as const } },
      200,
    );
  });
