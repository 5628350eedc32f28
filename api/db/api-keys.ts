// API key rows: what the router reads from them and what the API shows of them (never the hash).
import { eq } from "drizzle-orm";
import type { ApiKey, ApiKeySpec } from "../../shared/schemas/api-key.js";
import { metadataOf } from "../declarative.js";
import type { ApiKeyInfo } from "../router/types.js";
import type { Q } from "./client.js";
import { apiKeys } from "./schema.js";

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** The key whose current secret has this hash, if any. */
export async function findApiKeyByHash(q: Q, hash: string): Promise<ApiKeyRow | undefined> {
  const [row] = await q.select().from(apiKeys).where(eq(apiKeys.hash, hash));
  return row;
}

/** A key as the router checks it: its name and the limits of its spec. */
export function apiKeyInfo(row: Pick<ApiKeyRow, "name" | "spec">): ApiKeyInfo {
  const spec = JSON.parse(row.spec) as ApiKeySpec;
  const info: ApiKeyInfo = { name: row.name };
  if (spec.models) info.models = [...spec.models];
  if (spec.requestsPerMinute !== undefined) info.requestsPerMinute = spec.requestsPerMinute;
  if (spec.tokensPerMinute !== undefined) info.tokensPerMinute = spec.tokensPerMinute;
  if (spec.expiresAt !== undefined) info.expiresAt = spec.expiresAt;
  return info;
}

/** A key as the API shows it: `{name, spec, status, metadata}`, the spec exactly as written. */
export function apiKeyView(row: ApiKeyRow, now: number): ApiKey {
  const spec = JSON.parse(row.spec) as ApiKeySpec;
  return {
    name: row.name,
    spec,
    status: { expired: spec.expiresAt !== undefined && spec.expiresAt <= now, secretIssuedAt: row.secretIssuedAt },
    metadata: metadataOf(row),
  };
}
