// /api/v1/api-keys: the keys of the OpenAI-compatible API, their models, limits and expiry (a key's secret is shown
// once, when it is created or rotated; only its hash is stored).
import { createRoute } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { ApiKey, ApiKeySpec, ApiKeyWithSecret } from "../../shared/schemas/api-key.js";
import { ResourceName } from "../../shared/schemas/model.js";
import { z } from "../../shared/z.js";
import { actorOf, auditEvent } from "../audit.js";
import { requireAdmin } from "../auth.js";
import type { ApiKeyRow } from "../db/api-keys.js";
import { insertEvents } from "../db/events.js";
import { etagOf } from "../db/resources.js";
import { apiKeys } from "../db/schema.js";
import { hashSecret, newSecret } from "../db/secrets.js";
import { ApiError } from "../errors.js";
import { adminSecurity, errorResponses, jsonResponse } from "../openapi.js";
import { keysChanged } from "../router/keys.js";
import { apiKeyView } from "../views/api-keys.js";
import { type DeclaredKind, declarativeRoutes } from "./declarative.js";

type Fresh = { secret: string; hash: string; at: number };

/** API keys as a declarative kind: a PUT prepares a secret, and a key it creates gets that secret's hash. */
const API_KEYS: DeclaredKind<ApiKeyRow, Fresh> = {
  kind: "API key",
  placement: false,
  list: (q) => q.select().from(apiKeys).orderBy(asc(apiKeys.name)),
  find: async (q, name) => (await q.select().from(apiKeys).where(eq(apiKeys.name, name)))[0],
  save: async (tx, next, current, fresh) => {
    const row: ApiKeyRow = {
      ...next,
      hash: current?.hash ?? fresh.hash,
      secretIssuedAt: current?.secretIssuedAt ?? fresh.at,
    };
    await tx
      .insert(apiKeys)
      .values(row)
      .onConflictDoUpdate({
        target: apiKeys.name,
        set: { spec: row.spec, version: row.version, updatedAt: row.updatedAt },
      });
    return row;
  },
  remove: async (tx, name) => {
    await tx.delete(apiKeys).where(eq(apiKeys.name, name));
  },
};

async function freshSecret(at: number): Promise<Fresh> {
  const secret = newSecret("key");
  return { secret, hash: await hashSecret(secret), at };
}

const NameParam = z.object({
  name: ResourceName.openapi({ param: { name: "name", in: "path" }, example: "team-search" }),
});
const common = { tags: ["api-keys"], security: adminSecurity, middleware: requireAdmin };

const rotate = createRoute({
  ...common,
  method: "post",
  path: "/api/v1/api-keys/{name}/rotate",
  operationId: "rotateApiKey",
  summary: "Give an API key a new secret, shown once; the old one stops working",
  description:
    "The spec and its version stay as they are. The old secret is refused at once by this instance's router, within 5 s by others.",
  request: { params: NameParam },
  responses: {
    200: jsonResponse(ApiKeyWithSecret, "The key with its new `secret`; keep it, it is not shown again"),
    ...errorResponses(400, 401, 403, 404),
  },
});

export const apiKeyRoutes = declarativeRoutes({
  collection: "api-keys",
  one: "ApiKey",
  many: "ApiKeys",
  example: "team-search",
  Spec: ApiKeySpec,
  View: ApiKey,
  Created: ApiKeyWithSecret,
  table: API_KEYS,
  view: async (_q, rows, now) => rows.map((r) => apiKeyView(r, now)),
  prepare: freshSecret,
  created: (view, fresh) => ({ ...view, secret: fresh.secret }),
  afterWrite: keysChanged,
  docs: {
    list: "List API keys (never their secrets)",
    get: "Read an API key; `spec` is exactly as written",
    put: "Create or replace an API key: which models it may use, its limits, its expiry",
    putNotes:
      "Creating a key (201) returns its `secret`, once: only its hash is stored. Replacing one (200) keeps the secret and does not show it. " +
      "Changes reach this instance's router at once, other instances within 5 s.",
    replaced: "Replaced (or unchanged); the secret is not shown again",
    createdNote: "Created; keep `secret`, it is not shown again",
    remove: "Delete an API key: its secret stops working (its usage stays recorded)",
  },
}).openapi(rotate, async (c) => {
  const { name } = c.req.valid("param");
  const { store, now } = c.var.deps;
  const t = now();
  const { secret, hash } = await freshSecret(t);
  const [row] = await store.write(async (tx) => {
    const done = await tx.update(apiKeys).set({ hash, secretIssuedAt: t }).where(eq(apiKeys.name, name)).returning();
    const what = `API key ${name} rotated`;
    if (done.length)
      await insertEvents(tx, t, [
        auditEvent("api_key_rotated", { kind: "api_key", name }, actorOf(c.var.principal), what),
      ]);
    return done;
  });
  if (!row) throw new ApiError(404, "not_found", `no API key ${name}`);
  keysChanged(c.var.deps);
  c.var.deps.log.info(`API key ${name} rotated`, { apiKey: name, requestId: c.var.requestId });
  c.header("etag", etagOf(row.version));
  return c.json({ ...apiKeyView(row, t), secret }, 200);
});
