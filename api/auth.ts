import { eq, sql } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";
import type { Role } from "../shared/schemas/token.js";
import { type ApiKeyRow, findApiKeyByHash } from "./db/api-keys.js";
import type { Db, Q } from "./db/client.js";
import { adminTokens, joinTokens, nodeAssignIndex, nodes } from "./db/schema.js";
import { constantTimeEqual, hashSecret, secretKind } from "./db/secrets.js";
import { findAdminToken, joinTokenUnusable } from "./db/tokens.js";
import type { AppEnv, NodeAuthRow } from "./deps.js";
import { ApiError } from "./errors.js";

import { openApiPath, roleAllows, roleNeeded, roleRefusal } from "./roles.js";

const authColumns = {
  id: nodes.id,
  tokenHash: nodes.tokenHash,
  // a node placement never gave shards has no row there yet
  assignIndex: sql<number>`coalesce(${nodeAssignIndex.assignIndex}, 0)`,
  adminState: nodes.adminState,
  lastSeenAt: nodes.lastSeenAt,
  lostAt: nodes.lostAt,
  mgmtAddr: nodes.mgmtAddr,
} satisfies { [K in keyof NodeAuthRow]: unknown };
const nodeByToken = new WeakMap<Db, ReturnType<typeof prepareNodeByToken>>();
/** The node lookup every poll and heartbeat makes, its SQL built once per database. */
const prepareNodeByToken = (db: Db) =>
  db
    .select(authColumns)
    .from(nodes)
    .leftJoin(nodeAssignIndex, eq(nodeAssignIndex.nodeId, nodes.id))
    .where(eq(nodes.tokenHash, sql.placeholder("hash")))
    .prepare();

const CHALLENGE = { "www-authenticate": 'Bearer realm="llmgw"' };
const LAST_USED_RESOLUTION_MS = 60_000;

const unauthorized = (detail: string) => new ApiError(401, "unauthorized", detail, undefined, CHALLENGE);

/** The bearer token of a request; 401 when there is none. */
export function bearer(c: Context): string {
  const header = c.req.header("authorization");
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw unauthorized("missing bearer token: send `Authorization: Bearer <token>`");
  return m[1]!;
}

type Identity =
  | { kind: "admin"; row: typeof adminTokens.$inferSelect }
  | { kind: "node"; row: NodeAuthRow; token: string }
  | { kind: "join"; row: typeof joinTokens.$inferSelect }
  | { kind: "key"; row: ApiKeyRow };

/** How a refusal names the token that was sent: an API key is valid, only not here, so it is 403 and says where it goes. */
const sent = (id: Identity) =>
  id.kind === "key"
    ? "an API key (llmgw_key_…) was sent, which reaches only the OpenAI-compatible /v1/* endpoints"
    : `a ${id.kind} token was sent`;

/** Finds whose token this is (admin, node, join or API key); 401 when it is nobody's. */
export async function identify(c: Context<AppEnv>, token: string): Promise<Identity> {
  const { store, now } = c.var.deps;
  const hash = await hashSecret(token);
  const kind = secretKind(token);
  if (kind === "node") {
    // every poll and heartbeat comes this way: only the columns the agent routes read
    let lookup = nodeByToken.get(store.db);
    if (!lookup) nodeByToken.set(store.db, (lookup = prepareNodeByToken(store.db)));
    const [row]: NodeAuthRow[] = await lookup.execute({ hash });
    if (!row || !constantTimeEqual(row.tokenHash, hash))
      throw unauthorized("unknown node token: the node may have been deleted; register again");
    return { kind, row, token };
  }
  if (kind === "join") {
    const [row] = await store.db.select().from(joinTokens).where(eq(joinTokens.hash, hash));
    if (!row || !constantTimeEqual(row.hash, hash)) throw unauthorized("unknown join token");
    return { kind, row };
  }
  if (kind === "key") {
    const row = await findApiKeyByHash(store.db, hash);
    if (!row || !constantTimeEqual(row.hash, hash)) throw unauthorized("unknown or deleted API key");
    return { kind, row };
  }
  const row = await findAdminToken(store.db, hash);
  if (!row || !constantTimeEqual(row.hash, hash)) throw unauthorized("unknown or revoked token");
  const t = now();
  if (row.lastUsedAt === null || t - row.lastUsedAt > LAST_USED_RESOLUTION_MS) {
    await store.write((tx) => tx.update(adminTokens).set({ lastUsedAt: t }).where(eq(adminTokens.id, row.id)));
  }
  return { kind: "admin", row };
}

/** The join token with this hash if it can register a node now; else 401 (unknown) or 403 (expired, spent, revoked). */
export async function usableJoinToken(q: Q, hash: string, now: number) {
  const [jt] = await q.select().from(joinTokens).where(eq(joinTokens.hash, hash));
  if (!jt || !constantTimeEqual(jt.hash, hash)) throw unauthorized("unknown join token");
  const why = joinTokenUnusable(jt, now);
  if (why) throw new ApiError(403, "join_token_invalid", `${why}; ask an admin for a new one`);
  return jt;
}

/** 403 unless the admin token's role may use this route (api/roles.ts); checked before the body. */
function checkRole(c: Context<AppEnv>, role: Role) {
  const needed = roleNeeded(c.req.method, routePath(c));
  if (!roleAllows(role, needed))
    throw new ApiError(403, "forbidden", roleRefusal(`${c.req.method} ${openApiPath(routePath(c))}`, role, needed));
}

/** Admin-token routes, each as far as the token's role allows. */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const id = await identify(c, bearer(c));
  if (id.kind !== "admin") throw new ApiError(403, "forbidden", `this route needs an admin token; ${sent(id)}`);
  checkRole(c, id.row.role);
  c.set("principal", { kind: "admin", tokenId: id.row.id, tokenName: id.row.name, role: id.row.role });
  await next();
});

/** Agent routes under /api/v1/agents/{node}/…: only that node's own token. */
export const requireOwnNode = createMiddleware<AppEnv>(async (c, next) => {
  const id = await identify(c, bearer(c));
  if (id.kind !== "node")
    throw new ApiError(403, "forbidden", `agent endpoints need the node's own token (llmgw_node_…); ${sent(id)}`);
  const wanted = c.req.param("node");
  if (wanted !== undefined && wanted !== id.row.id)
    throw new ApiError(403, "forbidden", `this node token belongs to node ${id.row.id}, not ${wanted}`);
  const seen = Number(c.req.header("x-llmgw-index") ?? c.req.query("index") ?? 0);
  if (Number.isSafeInteger(seen) && seen > id.row.assignIndex) throw stateBehind(id.row.id, seen, id.row.assignIndex);
  c.set("principal", { kind: "node", nodeId: id.row.id, token: id.token });
  c.set("node", id.row);
  await next();
});

/**
 * An agent that saw an assignment index its node never had here: the database was restored from an older backup, or
 * the node deleted and registered again. Nothing of the call is written — placing after it could hand the devices of
 * the engines the node runs to new replicas — and the agent registers again first, reporting those engines, so that
 * placement can adopt them.
 */
export const stateBehind = (node: string, seen: number, have: number) =>
  new ApiError(
    409,
    "state_behind",
    `this agent saw assignment index ${seen}, the control plane has ${have} for ${node}: its state is older (restored from a backup?); register again to report the running engines`,
  );

/** Registration: a join token (new node), the node's own token, or an admin token (reset); checked before the body. */
export const requireRegistrar = createMiddleware<AppEnv>(async (c, next) => {
  const id = await identify(c, bearer(c));
  if (id.kind === "key")
    throw new ApiError(403, "forbidden", `registration needs a join, node or admin token; ${sent(id)}`);
  if (id.kind === "join") {
    await usableJoinToken(c.var.deps.store.db, id.row.hash, c.var.deps.now());
    c.set("principal", { kind: "join", hash: id.row.hash });
  } else if (id.kind === "node") {
    c.set("principal", { kind: "node", nodeId: id.row.id, token: id.token });
  } else {
    checkRole(c, id.row.role);
    c.set("principal", { kind: "admin", tokenId: id.row.id, tokenName: id.row.name, role: id.row.role });
  }
  await next();
});
