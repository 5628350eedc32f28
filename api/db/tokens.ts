import { count, eq } from "drizzle-orm";
import type { Q, Store } from "./client.js";
import { adminTokens, joinTokens } from "./schema.js";
import { hashSecret, newSecret, randomBase62 } from "./secrets.js";

export type AdminTokenRow = typeof adminTokens.$inferSelect;
export type JoinTokenRow = typeof joinTokens.$inferSelect;

/** Stores a new admin token (or the given secret, e.g. LLMGW_ADMIN_TOKEN) and returns it with its row. */
export async function insertAdminToken(
  q: Q,
  name: string,
  now: number,
  secret = newSecret("adm"),
  role: AdminTokenRow["role"] = "admin",
) {
  const row: AdminTokenRow = {
    id: `tok_${randomBase62(10)}`,
    name,
    hash: await hashSecret(secret),
    role,
    createdAt: now,
    lastUsedAt: null,
  };
  await q.insert(adminTokens).values(row);
  return { row, secret };
}

/** How many admin tokens exist. */
export async function countAdminTokens(q: Q): Promise<number> {
  const [r] = await q.select({ n: count() }).from(adminTokens);
  return r?.n ?? 0;
}

/** The admin token row whose hash is `hash`, if any. */
export async function findAdminToken(q: Q, hash: string) {
  const [r] = await q.select().from(adminTokens).where(eq(adminTokens.hash, hash));
  return r;
}

/** Stores a new join token and returns its secret with its row. */
export async function insertJoinToken(
  q: Q,
  opts: { name?: string; expiresInS?: number; maxUses?: number },
  now: number,
) {
  const secret = newSecret("join");
  const row: JoinTokenRow = {
    id: `join_${randomBase62(10)}`,
    name: opts.name ?? null,
    hash: await hashSecret(secret),
    createdAt: now,
    expiresAt: opts.expiresInS ? now + opts.expiresInS * 1000 : null,
    maxUses: opts.maxUses ?? null,
    uses: 0,
    revokedAt: null,
  };
  await q.insert(joinTokens).values(row);
  return { row, secret };
}

/** Why a join token cannot register a node now, or undefined when it can. */
export function joinTokenUnusable(row: JoinTokenRow, now: number): string | undefined {
  if (row.revokedAt !== null) return "the join token was revoked";
  if (row.expiresAt !== null && now >= row.expiresAt) return "the join token has expired";
  if (row.maxUses !== null && row.uses >= row.maxUses)
    return `the join token has been used ${row.uses} of ${row.maxUses} times`;
  return undefined;
}

/** A join token as the API shows it (never the hash). */
export function joinTokenView(row: JoinTokenRow, now: number) {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    maxUses: row.maxUses,
    uses: row.uses,
    usable: joinTokenUnusable(row, now) === undefined,
  };
}

/** An admin token as the API shows it (never the hash). */
export function adminTokenView(row: AdminTokenRow) {
  return { id: row.id, name: row.name, role: row.role, createdAt: row.createdAt, lastUsedAt: row.lastUsedAt };
}

/** Makes sure an admin token exists: LLMGW_ADMIN_TOKEN if given, else one generated on first start (returned once). */
export async function ensureAdminToken(store: Store, now: number, fromEnv?: string): Promise<string | undefined> {
  return store.write(async (tx) => {
    if (fromEnv) {
      const hash = await hashSecret(fromEnv);
      if (!(await findAdminToken(tx, hash))) await insertAdminToken(tx, "LLMGW_ADMIN_TOKEN", now, fromEnv);
      return undefined;
    }
    if ((await countAdminTokens(tx)) > 0) return undefined;
    return (await insertAdminToken(tx, "first-start", now)).secret;
  });
}
