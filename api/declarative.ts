// What the declarative resources (models, deployments) share: versions, ETags, If-Match and no-op detection.
import type { Q, Store, Tx } from "./db/client.js";
import { bumpGeneration } from "./db/cluster.js";
import { ApiError } from "./errors.js";
import { etagOf, nextVersion, type StoredResource } from "./db/resources.js";

/** Enforces `If-Match`: absent passes; `*` needs the resource to exist; otherwise one of the listed ETags must be current. */
export function checkIfMatch(header: string | undefined, kind: string, name: string, current: StoredResource | undefined): void {
  if (header === undefined) return;
  const wanted = header.split(",").map((t) => t.trim());
  if (current && (wanted.includes("*") || wanted.includes(etagOf(current.version)))) return;
  const now = current ? `it is at ${etagOf(current.version)}` : "it does not exist";
  throw new ApiError(412, "precondition_failed", `If-Match ${header} does not match ${kind} ${name}: ${now}`);
}

/** How one kind of declarative resource is read and written. */
export type DeclaredKind<R extends StoredResource> = {
  kind: string;
  /** False for kinds placement never reads (API keys): their changes leave the cluster generation alone. */
  placement?: false;
  find(q: Q, name: string): Promise<R | undefined>;
  /** Writes the next version (insert or update) and returns the stored row. */
  save(tx: Tx, next: StoredResource, current: R | undefined): Promise<R>;
  remove(tx: Tx, name: string): Promise<void>;
};

/**
 * Creates or replaces a resource in one transaction: If-Match checked, `check` run, a new version written and the
 * cluster generation bumped (placement's kinds) only when the spec changed. `written` is the spec as the client wrote it.
 */
export async function putDeclared<R extends StoredResource>(
  store: Store,
  k: DeclaredKind<R>,
  req: { name: string; written: unknown; ifMatch: string | undefined; ifNoneMatch?: string; now: number; check?: (tx: Tx) => Promise<void> },
): Promise<{ row: R; created: boolean }> {
  return store.write(async (tx) => {
    const current = await k.find(tx, req.name);
    checkIfMatch(req.ifMatch, k.kind, req.name, current);
    if (req.ifNoneMatch?.trim() === "*" && current) {
      throw new ApiError(412, "precondition_failed", `If-None-Match * : ${k.kind} ${req.name} already exists (at ${etagOf(current.version)})`);
    }
    await req.check?.(tx);
    const next = nextVersion(current, req.name, req.written, req.now);
    if (!next.changed) return { row: current!, created: false };
    const row = await k.save(tx, next.row, current);
    if (k.placement !== false) await bumpGeneration(tx);
    return { row, created: !current };
  });
}

/** Deletes a resource (If-Match checked, 404 when absent) and bumps the cluster generation (placement's kinds). */
export async function deleteDeclared<R extends StoredResource>(store: Store, k: DeclaredKind<R>, name: string, ifMatch: string | undefined): Promise<void> {
  await store.write(async (tx) => {
    const current = await k.find(tx, name);
    checkIfMatch(ifMatch, k.kind, name, current);
    if (!current) throw new ApiError(404, "not_found", `no ${k.kind} ${name}`);
    await k.remove(tx, name);
    if (k.placement !== false) await bumpGeneration(tx);
  });
}
