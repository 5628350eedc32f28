import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { CreatedJoinToken, CreateJoinToken, JoinToken } from "../../shared/schemas/token.js";
import { z } from "../../shared/z.js";
import { actorOf, auditEvent } from "../audit.js";
import { requireAdmin } from "../auth.js";
import { insertEvents } from "../db/events.js";
import { joinTokens } from "../db/schema.js";
import { insertJoinToken, joinTokenView } from "../db/tokens.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonBody, jsonResponse } from "../openapi.js";

const JoinTokenId = z.object({
  id: z
    .string()
    .max(64)
    .openapi({ param: { name: "id", in: "path" }, example: "join_9fQ2mX1c" }),
});

const create = createRoute({
  method: "post",
  path: "/api/v1/join-tokens",
  operationId: "createJoinToken",
  tags: ["tokens"],
  summary: "Create a join token that lets agents register new nodes",
  description:
    "A join token registers new node ids only; it cannot take over a registered node. Optional expiry and use limit.",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  request: { body: jsonBody(CreateJoinToken) },
  responses: {
    201: jsonResponse(CreatedJoinToken, "Created; keep `token`, it is not shown again"),
    ...errorResponses(400, 401, 403, 413, 415),
  },
});

const list = createRoute({
  method: "get",
  path: "/api/v1/join-tokens",
  operationId: "listJoinTokens",
  tags: ["tokens"],
  summary: "List join tokens with their uses (never their secrets)",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  responses: {
    200: jsonResponse(z.object({ items: z.array(JoinToken) }), "Join tokens that are not revoked, oldest first"),
    ...errorResponses(401, 403),
  },
});

const revoke = createRoute({
  method: "delete",
  path: "/api/v1/join-tokens/{id}",
  operationId: "revokeJoinToken",
  tags: ["tokens"],
  summary: "Revoke a join token (nodes it registered keep their own tokens)",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  request: { params: JoinTokenId },
  responses: { 204: { description: "Revoked" }, ...errorResponses(401, 403, 404) },
});

export const joinTokenRoutes = new OpenAPIHono<AppEnv>()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    const { store, now } = c.var.deps;
    const t = now();
    const { row, secret } = await store.write(async (tx) => {
      const made = await insertJoinToken(tx, body, t);
      const subject = { kind: "join_token", name: made.row.id };
      const what = `join token ${made.row.id} created`;
      await insertEvents(tx, t, [auditEvent("join_token_created", subject, actorOf(c.var.principal), what)]);
      return made;
    });
    c.var.deps.log.info(`join token ${row.id} created`, { tokenId: row.id, requestId: c.var.requestId });
    return c.json({ ...joinTokenView(row, t), token: secret }, 201);
  })
  .openapi(list, async (c) => {
    const rows = await c.var.deps.store.db.select().from(joinTokens).orderBy(asc(joinTokens.createdAt), sql`rowid`);
    const t = c.var.deps.now();
    return c.json({ items: rows.filter((r) => r.revokedAt === null).map((r) => joinTokenView(r, t)) }, 200);
  })
  .openapi(revoke, async (c) => {
    const { id } = c.req.valid("param");
    const { store, now } = c.var.deps;
    const done = await store.write(async (tx) => {
      const gone = await tx
        .update(joinTokens)
        .set({ revokedAt: now() })
        .where(and(eq(joinTokens.id, id), isNull(joinTokens.revokedAt)))
        .returning({ id: joinTokens.id });
      const subject = { kind: "join_token", name: id };
      const what = `join token ${id} revoked`;
      if (gone.length)
        await insertEvents(tx, now(), [auditEvent("join_token_revoked", subject, actorOf(c.var.principal), what)]);
      return gone;
    });
    if (!done.length) throw new ApiError(404, "not_found", `no join token ${id}`);
    c.var.deps.log.info(`join token ${id} revoked`, { tokenId: id, requestId: c.var.requestId });
    return c.body(null, 204);
  });
