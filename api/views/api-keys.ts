// An API key as the API shows it (never the hash).
import type { ApiKey, ApiKeySpec } from "../../shared/schemas/api-key.js";
import type { ApiKeyRow } from "../db/api-keys.js";
import { metadataOf } from "../db/resources.js";

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
