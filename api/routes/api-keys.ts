import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { ApiKey, ApiKeySpec, ApiKeyWithSecret } from "../../shared/schemas/api-key.js";
import { ResourceName } from "../../shared/schemas/model.js";
import { z } from "../../shared/z.js";
import { requireAdmin } from "../auth.js";
import { type ApiKeyRow } from "../db/api-keys.js";
import { apiKeyView } from "../views/api-keys.js";
import { apiKeys } from "../db/schema.js";
import { type DeclaredKind, deleteDeclared, putDeclared } from "../declarative.js";
import { etagOf } from "../db/resources.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonBody, jsonResponse } from "../openapi.js";
import { keysChanged } from "../router/keys.js";
import { hashSecret, newSecret } from "../db/secrets.js";
import { IfMatch, PutConditions, putBody, sameName, writtenSpec } from "./resource-shapes.js";

const NameParam = z.object({ name: ResourceName.openapi({ param: { name: "name", in: "path" }, example: "team-search" }) });
const PutApiKey = putBody(ApiKeySpec, "PutApiKey");

/** API keys as a declarative kind; a key created by this PUT gets `fresh` as its secret's hash. */
function keyKind(fresh: { hash: string; at: number }): DeclaredKind<ApiKeyRow> {
  return {
    kind: "API key",
    placement: false,
    find: async (q, name) => (await q.select().from(apiKeys).where(eq(apiKeys.name, name)))[0],
    save: async (tx, next, current) => {
      const row: ApiKeyRow = { ...next, hash: current?.hash ?? fresh.hash, secretIssuedAt: current?.secretIssuedAt ?? fresh.at };
      await tx
        .insert(apiKeys)
        .values(row)
        .onConflictDoUpdate({ target: apiKeys.name, set: { spec: row.spec, version: row.version, updatedAt: row.updatedAt } });
      return row;
    },
    remove: async (tx, name) => {
      await tx.delete(apiKeys).where(eq(apiKeys.name, name));
    },
  };
}

// deletes never save: no secret is made for them
const DELETING = keyKind({ hash: "", at: 0 });

const common = { tags: ["api-keys"], security: adminSecurity, middleware: requireAdmin };

const list = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/api-keys",
  operationId: "listApiKeys",
  summary: "List API keys (never their secrets)",
  responses: { 200: jsonResponse(z.object({ items: z.array(ApiKey) }), "API keys by name"), ...errorResponses(401, 403) },
});

const get = createRoute({
  ...common,
  method: "get",
  path: "/api/v1/api-keys/{name}",
  operationId: "getApiKey",
  summary: "Read an API key; `spec` is exactly as written",
  request: { params: NameParam },
  responses: { 200: jsonResponse(ApiKey, "The API key (ETag header: its version)"), ...errorResponses(400, 401, 403, 404) },
});

const put = createRoute({
  ...common,
  method: "put",
  path: "/api/v1/api-keys/{name}",
  operationId: "putApiKey",
  summary: "Create or replace an API key: which models it may use, its limits, its expiry",
  description:
    "Creating a key (201) returns its `secret`, once: only its hash is stored. Replacing one (200) keeps the secret and does not show it. " +
    "The body is `{spec}` (`name`, `status` and `metadata` may be sent back as read; `status` and `metadata` are ignored). " +
    "A PUT that changes nothing keeps the version. `If-Match` makes it conditional (412 when the ETag is not current), `If-None-Match: *` create-only. " +
    "Changes reach this instance's router at once, other instances within 5 s.",
  request: { params: NameParam, headers: PutConditions, body: jsonBody(PutApiKey) },
  responses: {
    200: jsonResponse(ApiKey, "Replaced (or unchanged); the secret is not shown again"),
    201: jsonResponse(ApiKeyWithSecret, "Created; keep `secret`, it is not shown again"),
    ...errorResponses(400, 401, 403, 412, 413, 415),
  },
});

const remove = createRoute({
  ...common,
  method: "delete",
  path: "/api/v1/api-keys/{name}",
  operationId: "deleteApiKey",
  summary: "Delete an API key: its secret stops working (its usage stays recorded)",
  request: { params: NameParam, headers: IfMatch },
  responses: { 204: { description: "Deleted" }, ...errorResponses(400, 401, 403, 404, 412) },
});

const rotate = createRoute({
  ...common,
  method: "post",
  path: "/api/v1/api-keys/{name}/rotate",
  operationId: "rotateApiKey",
  summary: "Give an API key a new secret, shown once; the old one stops working",
  description: "The spec and its version stay as they are. The old secret is refused at once by this instance's router, within 5 s by others.",
  request: { params: NameParam },
  responses: { 200: jsonResponse(ApiKeyWithSecret, "The key with its new `secret`; keep it, it is not shown again"), ...errorResponses(400, 401, 403, 404) },
});

export const apiKeyRoutes = new OpenAPIHono<AppEnv>()
  .openapi(list, async (c) => {
    const { store, now } = c.var.deps;
    const rows = await store.db.select().from(apiKeys).orderBy(asc(apiKeys.name));
    const t = now();
    return c.json({ items: rows.map((r) => apiKeyView(r, t)) }, 200);
  })
  .openapi(get, async (c) => {
    const { name } = c.req.valid("param");
    const { store, now } = c.var.deps;
    const [row] = await store.db.select().from(apiKeys).where(eq(apiKeys.name, name));
    if (!row) throw new ApiError(404, "not_found", `no API key ${name}`);
    c.header("etag", etagOf(row.version));
    return c.json(apiKeyView(row, now()), 200);
  })
  .openapi(put, async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    sameName(name, body.name);
    const { store, now } = c.var.deps;
    const t = now();
    const secret = newSecret("key");
    const kind = keyKind({ hash: await hashSecret(secret), at: t });
    const { row, created } = await putDeclared(store, kind, { name, written: await writtenSpec(c), ifMatch: c.req.header("if-match"), ifNoneMatch: c.req.header("if-none-match"), now: t });
    keysChanged(c.var.deps);
    c.header("etag", etagOf(row.version));
    return created ? c.json({ ...apiKeyView(row, t), secret }, 201) : c.json(apiKeyView(row, t), 200);
  })
  .openapi(remove, async (c) => {
    const { name } = c.req.valid("param");
    await deleteDeclared(c.var.deps.store, DELETING, name, c.req.header("if-match"));
    keysChanged(c.var.deps);
    return c.body(null, 204);
  })
  .openapi(rotate, async (c) => {
    const { name } = c.req.valid("param");
    const { store, now } = c.var.deps;
    const t = now();
    const secret = newSecret("key");
    const hash = await hashSecret(secret);
    const [row] = await store.write((tx) => tx.update(apiKeys).set({ hash, secretIssuedAt: t }).where(eq(apiKeys.name, name)).returning());
    if (!row) throw new ApiError(404, "not_found", `no API key ${name}`);
    keysChanged(c.var.deps);
    c.header("etag", etagOf(row.version));
    return c.json({ ...apiKeyView(row, t), secret }, 200);
  });
