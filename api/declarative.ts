// What the declarative resources (models, deployments) share: versions, ETags, If-Match and no-op detection.
import { ApiError } from "./errors.js";

export type StoredResource = { name: string; spec: string; version: number; createdAt: number; updatedAt: number };

/** The strong ETag of a stored version. */
export const etagOf = (version: number) => `"${version}"`;

/** JSON with object keys sorted, to tell a real change from the same spec written in another order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as object).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

/** Enforces `If-Match`: absent passes; `*` needs the resource to exist; otherwise one of the listed ETags must be current. */
export function checkIfMatch(header: string | undefined, kind: string, name: string, current: StoredResource | undefined): void {
  if (header === undefined) return;
  const wanted = header.split(",").map((t) => t.trim());
  if (current && (wanted.includes("*") || wanted.includes(etagOf(current.version)))) return;
  const now = current ? `it is at ${etagOf(current.version)}` : "it does not exist";
  throw new ApiError(412, "precondition_failed", `If-Match ${header} does not match ${kind} ${name}: ${now}`);
}

/** The row a PUT should write: unchanged (same version) when the spec is the same, else the next version. */
export function nextVersion(current: StoredResource | undefined, name: string, spec: unknown, now: number): { row: StoredResource; changed: boolean } {
  if (current && canonicalJson(JSON.parse(current.spec)) === canonicalJson(spec)) return { row: current, changed: false };
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
