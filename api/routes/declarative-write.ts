// Writing a declarative resource (declarative.ts builds the routes): PUT and DELETE, each one transaction with its
// If-Match check, the new version, the cluster generation bumped for placement's kinds and the audit event.
import type { Actor } from "../audit.js";
import { declaredEvent } from "../audit.js";
import type { Q, Store, Tx } from "../db/client.js";
import { bumpGeneration } from "../db/cluster.js";
import { insertEvents } from "../db/events.js";
import { etagOf, nextVersion, type StoredResource } from "../db/resources.js";
import { ApiError } from "../errors.js";

/**
 * Enforces `If-Match`: absent passes; `*` needs the resource to exist; otherwise one of the listed ETags must be
 * current.
 */
export function checkIfMatch(
  header: string | undefined,
  kind: string,
  name: string,
  current: StoredResource | undefined,
): void {
  if (header === undefined) return;
  const wanted = header.split(",").map((t) => t.trim());
  if (current && (wanted.includes("*") || wanted.includes(etagOf(current.version)))) return;
  const now = current ? `it is at ${etagOf(current.version)}` : "it does not exist";
  throw new ApiError(412, "precondition_failed", `If-Match ${header} does not match ${kind} ${name}: ${now}`);
}

/** How one kind of declarative resource is read and written; `X` is what a PUT prepares before its transaction. */
export type DeclaredKind<R extends StoredResource, X = undefined> = {
  /** The kind as messages name it ("model", "API key"). */
  kind: string;
  /** False for kinds placement never reads (API keys): their changes leave the cluster generation alone. */
  placement?: false;
  list(q: Q): Promise<R[]>;
  find(q: Q, name: string): Promise<R | undefined>;
  /** Writes the next version (insert or update) and returns the stored row. */
  save(tx: Tx, next: StoredResource, current: R | undefined, prepared: X): Promise<R>;
  remove(tx: Tx, name: string): Promise<void>;
};

export type PutRequest = {
  name: string;
  written: unknown;
  ifMatch: string | undefined;
  ifNoneMatch?: string;
  now: number;
  check?: (tx: Tx) => Promise<void>;
  /** Who asked: the change is recorded as an audit event with a diff of the spec. */
  actor?: Actor;
};

/**
 * Creates or replaces a resource in one transaction: If-Match checked, `check` run, a new version written and the
 * cluster generation bumped (placement's kinds) only when the spec changed. `written` is the spec as the client wrote
 * it.
 */
export async function putDeclared<R extends StoredResource, X>(
  store: Store,
  k: DeclaredKind<R, X>,
  req: PutRequest,
  prepared: X,
): Promise<{ row: R; created: boolean }> {
  return store.write(async (tx) => {
    const current = await k.find(tx, req.name);
    checkIfMatch(req.ifMatch, k.kind, req.name, current);
    if (req.ifNoneMatch?.trim() === "*" && current) {
      throw new ApiError(
        412,
        "precondition_failed",
        `If-None-Match * : ${k.kind} ${req.name} already exists (at ${etagOf(current.version)})`,
      );
    }
    await req.check?.(tx);
    const next = nextVersion(current, req.name, req.written, req.now);
    if (!next.changed) return { row: current!, created: false };
    const row = await k.save(tx, next.row, current, prepared);
    if (k.placement !== false) await bumpGeneration(tx);
    await insertEvents(tx, req.now, [declaredEvent(k.kind, req.name, current?.spec, row, req.actor)]);
    return { row, created: !current };
  });
}

/** Deletes a resource (If-Match checked, 404 when absent), bumps the cluster generation (placement's kinds), audits it. */
export async function deleteDeclared<R extends StoredResource, X>(
  store: Store,
  k: DeclaredKind<R, X>,
  name: string,
  ifMatch: string | undefined,
  audit: { now: number; actor?: Actor },
): Promise<void> {
  await store.write(async (tx) => {
    const current = await k.find(tx, name);
    checkIfMatch(ifMatch, k.kind, name, current);
    if (!current) throw new ApiError(404, "not_found", `no ${k.kind} ${name}`);
    await k.remove(tx, name);
    if (k.placement !== false) await bumpGeneration(tx);
    await insertEvents(tx, audit.now, [declaredEvent(k.kind, name, current.spec, undefined, audit.actor)]);
  });
}
