import { eq } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import { findAdminToken } from "./db/tokens.js";
import { adminTokens, nodes } from "./db/schema.js";
import type { AppEnv } from "./deps.js";
import { ApiError } from "./errors.js";
import { constantTimeEqual, hashSecret, secretKind } from "./secrets.js";

const CHALLENGE = { "www-authenticate": 'Bearer realm="llmgw"' };
const LAST_USED_RESOLUTION_MS = 60_000;

/** The bearer token of a request; 401 when there is none. */
export function bearer(c: Context): string {
  const header = c.req.header("authorization");
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw new ApiError(401, "unauthorized", "missing bearer token: send `Authorization: Bearer <token>`", undefined, CHALLENGE);
  return m[1]!;
}

/** Resolves an admin token to its row, or throws 401/403. */
export async function authenticateAdmin(c: Context<AppEnv>, token: string) {
  const kind = secretKind(token);
  if (kind === "node" || kind === "join" || kind === "key") {
    throw new ApiError(403, "forbidden", `this route needs an admin token; a ${kind} token was sent`);
  }
  const { store, now } = c.var.deps;
  const hash = await hashSecret(token);
  const row = await findAdminToken(store.db, hash);
  if (!row || !constantTimeEqual(row.hash, hash)) throw new ApiError(401, "unauthorized", "unknown or revoked token", undefined, CHALLENGE);
  const t = now();
  if (row.lastUsedAt === null || t - row.lastUsedAt > LAST_USED_RESOLUTION_MS) {
    await store.write((tx) => tx.update(adminTokens).set({ lastUsedAt: t }).where(eq(adminTokens.id, row.id)));
  }
  return row;
}

/** Resolves a node token to its node row, or throws 401/403. */
export async function authenticateNode(c: Context<AppEnv>, token: string) {
  if (secretKind(token) !== "node") throw new ApiError(403, "forbidden", "agent endpoints need the node's own token (llmgw_node_…)");
  const hash = await hashSecret(token);
  const [row] = await c.var.deps.store.db.select().from(nodes).where(eq(nodes.tokenHash, hash));
  if (!row || !constantTimeEqual(row.tokenHash, hash)) {
    throw new ApiError(401, "unauthorized", "unknown node token: the node may have been deleted; register again", undefined, CHALLENGE);
  }
  return row;
}

/** Admin-only routes. */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const row = await authenticateAdmin(c, bearer(c));
  c.set("principal", { kind: "admin", tokenId: row.id });
  await next();
});

/** Agent routes under /api/v1/agents/{node}/…: only that node's own token. */
export const requireOwnNode = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearer(c);
  const row = await authenticateNode(c, token);
  const wanted = c.req.param("node");
  if (wanted !== undefined && wanted !== row.id) {
    throw new ApiError(403, "forbidden", `this node token belongs to node ${row.id}, not ${wanted}`);
  }
  c.set("principal", { kind: "node", nodeId: row.id, token });
  await next();
});
