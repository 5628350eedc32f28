// Stored declarative resources (models, deployments, API keys): versions, ETags, metadata and no-op detection.
import { canonicalJson } from "../../shared/canonical-json.js";

export type StoredResource = { name: string; spec: string; version: number; createdAt: number; updatedAt: number };

/** The strong ETag of a stored version. */
export const etagOf = (version: number) => `"${version}"`;

/** The row a PUT should write: unchanged (same version) when the spec is the same, else the next version. */
export function nextVersion(
  current: StoredResource | undefined,
  name: string,
  spec: unknown,
  now: number,
): { row: StoredResource; changed: boolean } {
  if (current && canonicalJson(JSON.parse(current.spec)) === canonicalJson(spec))
    return { row: current, changed: false };
  const row = {
    name,
    spec: JSON.stringify(spec),
    version: (current?.version ?? 0) + 1,
    createdAt: current?.createdAt ?? now,
    updatedAt: now,
  };
  return { row, changed: true };
}

/** The metadata block of a stored resource. */
export function metadataOf(row: StoredResource) {
  return { version: row.version, etag: etagOf(row.version), createdAt: row.createdAt, updatedAt: row.updatedAt };
}
