import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { asc, eq, sql } from "drizzle-orm";
import { AdminToken, CreateAdminToken, CreatedAdminToken } from "../../shared/schemas/token.js";
import { z } from "../../shared/z.js";
import { actorOf, auditEvent } from "../audit.js";
import { requireAdmin } from "../auth.js";
import { insertEvents } from "../db/events.js";
import { adminTokens } from "../db/schema.js";
import { adminTokenView, insertAdminToken } from "../db/tokens.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonBody, jsonResponse } from "../openapi.js";

const TokenId = z.object({
  id: z
    .string()
    .max(64)
    .openapi({ param: { name: "id", in: "path" }, example: "tok_3kq8Zp2v" }),
});

const create = createRoute({
  method: "post",
  path: "/api/v1/tokens",
  operationId: "createAdminToken",
  tags: ["tokens"],
  summary: "Create an admin token (the secret is shown once)",
  description: "`role` is admin, operator or viewer (default admin); see the roles table in docs/api.md.",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  request: { body: jsonBody(CreateAdminToken) },
  responses: {
    201: jsonResponse(CreatedAdminToken, "Created; keep `token`, it is not shown again"),
    ...errorResponses(400, 401, 403, 413, 415),
  },
});

const list = createRoute({
  method: "get",
  path: "/api/v1/tokens",
  operationId: "listAdminTokens",
  tags: ["tokens"],
  summary: "List admin tokens (never their secrets)",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  responses: {
    200: jsonResponse(z.object({ items: z.array(AdminToken) }), "Admin tokens, oldest first"),
    ...errorResponses(401, 403),
  },
});

const remove = createRoute({
  method: "delete",
  path: "/api/v1/tokens/{id}",
  operationId: "deleteAdminToken",
  tags: ["tokens"],
  summary: "Revoke an admin token",
  description: "The last token with the admin role cannot be revoked: create another first.",
  security: adminSecurity,
  middleware: [requireAdmin] as const,
  request: { params: TokenId },
  responses: { 204: { description: "Revoked" }, ...errorResponses(401, 403, 404, 409) },
});

export const tokenRoutes = new OpenAPIHono<AppEnv>()
  .openapi(create, async (c) => {
    const { name, role } = c.req.valid("json");
    const { store, now } = c.var.deps;
    const { row, secret } = await store.write(async (tx) => {
      const made = await insertAdminToken(tx, name, now(), undefined, role);
      const what = `admin token ${made.row.id} (${made.row.name}, ${made.row.role}) created`;
      const subject = { kind: "admin_token", name: made.row.id };
      const data = { tokenName: made.row.name, role: made.row.role };
      await insertEvents(tx, now(), [auditEvent("admin_token_created", subject, actorOf(c.var.principal), what, data)]);
      return made;
    });
    c.var.deps.log.info(`admin token ${row.id} (${row.name}, ${row.role}) created`, {
      tokenId: row.id,
      requestId: c.var.requestId,
    });
    return c.json({ ...adminTokenView(row), token: secret }, 201);
  })
  .openapi(list, async (c) => {
    const rows = await c.var.deps.store.db.select().from(adminTokens).orderBy(asc(adminTokens.createdAt), sql`rowid`);
    return c.json({ items: rows.map(adminTokenView) }, 200);
  })
  .openapi(remove, async (c) => {
    const { id } = c.req.valid("param");
    const { now } = c.var.deps;
    await c.var.deps.store.write(async (tx) => {
      const all = await tx.select({ id: adminTokens.id, role: adminTokens.role }).from(adminTokens);
      const it = all.find((t) => t.id === id);
      if (!it) throw new ApiError(404, "not_found", `no admin token ${id}`);
      if (it.role === "admin" && all.filter((t) => t.role === "admin").length === 1)
        throw new ApiError(
          409,
          "conflict",
          "this is the last token with the admin role; create another before revoking it",
        );
      await tx.delete(adminTokens).where(eq(adminTokens.id, id));
      const subject = { kind: "admin_token", name: id };
      const what = `admin token ${id} revoked`;
      await insertEvents(tx, now(), [auditEvent("admin_token_revoked", subject, actorOf(c.var.principal), what)]);
    });
    c.var.deps.log.info(`admin token ${id} revoked`, { tokenId: id, requestId: c.var.requestId });
    return c.body(null, 204);
  });
