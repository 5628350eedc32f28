// API key rows and what the router reads from them (the API's view of a key is api/views/api-keys.ts).
import { eq } from "drizzle-orm";
import type { Q } from "./client.js";
import { apiKeys } from "./schema.js";

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** The key whose current secret has this hash, if any. */
export async function findApiKeyByHash(q: Q, hash: string): Promise<ApiKeyRow | undefined> {
  const [row] = await q.select().from(apiKeys).where(eq(apiKeys.hash, hash));
  return row;
}
