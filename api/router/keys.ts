// API keys as the router checks them: looked up by the hash of the presented secret and cached per instance for a
// few seconds — answers and "no such key" alike — so the hot path rarely reads the database. When the database
// cannot be read, keys seen before are still answered from what was last read: the router keeps serving.
import type { ApiKeySpec } from "../../shared/schemas/api-key.js";
import { type ApiKeyRow, findApiKeyByHash } from "../db/api-keys.js";
import type { Store } from "../db/client.js";
import { hashSecret, secretKind } from "../db/secrets.js";
import type { AppDeps } from "../deps.js";
import type { Log } from "../log.js";
import type { ApiKeyInfo, KeyStore } from "./types.js";

export const DEFAULT_KEY_TTL_MS = 5000;

export type KeyCache = KeyStore & {
  /** Makes every cached answer stale, so the next lookup of each reads the database (after the API changed a key). */
  forget(): void;
  /** How many secrets are cached, known and unknown (for tests and metrics). */
  size(): number;
};

/** The id of a key (`ApiKeyInfo.id`): a key's name is taken again only after it is deleted, at a later time. */
export const apiKeyId = (row: Pick<ApiKeyRow, "name" | "createdAt">) => `${row.name}@${row.createdAt}`;

/** A key as the router checks it: its id, its name and the limits of its spec. */
export function apiKeyInfo(row: Pick<ApiKeyRow, "name" | "spec" | "createdAt">): ApiKeyInfo {
  const spec = JSON.parse(row.spec) as ApiKeySpec;
  const info: ApiKeyInfo = { id: apiKeyId(row), name: row.name };
  if (spec.models) info.models = [...spec.models];
  if (spec.requestsPerMinute !== undefined) info.requestsPerMinute = spec.requestsPerMinute;
  if (spec.tokensPerMinute !== undefined) info.tokensPerMinute = spec.tokensPerMinute;
  if (spec.maxConcurrent !== undefined) info.maxConcurrent = spec.maxConcurrent;
  if (spec.expiresAt !== undefined) info.expiresAt = spec.expiresAt;
  return info;
}

type Entry = { info: ApiKeyInfo | undefined; freshUntil: number };

/**
 * A key store over the database. Answers are fresh for `ttlMs`; keys changed through another instance take effect
 * here within that time, keys changed through this one at once (the API calls `forget`). `identify` rejects only when
 * the database cannot be read and the secret was never seen: the caller answers 503, not 401.
 */
export function createKeyStore(
  store: Store,
  o: { now: () => number; ttlMs?: number; maxEntries?: number; log?: Log },
): KeyCache {
  const ttl = o.ttlMs ?? DEFAULT_KEY_TTL_MS;
  const max = o.maxEntries ?? 10_000;
  // Known and unknown secrets apart, so that a flood of made-up secrets cannot push the real keys out.
  const hashes = new Map<string, string>();
  const known = new Map<string, Entry>();
  const unknown = new Map<string, Entry>();
  const reading = new Map<string, { epoch: number; answer: Promise<ApiKeyInfo | undefined> }>();
  let epoch = 0;
  let failingSince: number | undefined;

  const remember = (hash: string, entry: Entry) => {
    known.delete(hash);
    unknown.delete(hash);
    const into = entry.info ? known : unknown;
    into.set(hash, entry);
    if (into.size > max) into.delete(into.keys().next().value!);
  };

  const read = (hash: string): Promise<ApiKeyInfo | undefined> => {
    const started = epoch;
    return findApiKeyByHash(store.db, hash).then(
      (row) => {
        const info = row ? apiKeyInfo(row) : undefined;
        // a read that began before `forget` may have seen the key as it was: answer with it, but do not keep it
        if (started === epoch) remember(hash, { info, freshUntil: o.now() + ttl });
        if (failingSince !== undefined)
          o.log?.info("router: API keys readable again", { failedForMs: o.now() - failingSince });
        failingSince = undefined;
        return info;
      },
      (e: unknown) => {
        if (failingSince === undefined) {
          failingSince = o.now();
          o.log?.warn("router: cannot read API keys; answering from the keys seen before", {
            known: known.size,
            error: e instanceof Error ? e.message : String(e),
          });
        }
        const last = known.get(hash) ?? unknown.get(hash);
        if (!last) throw e;
        // asked again after another ttl, not on every request to a database that is down
        last.freshUntil = o.now() + ttl;
        return last.info;
      },
    );
  };

  return {
    async identify(secret) {
      if (secretKind(secret) !== "key") return undefined;
      // hashing costs tens of µs per request: remember the hashes of the secrets seen lately
      let hash = hashes.get(secret);
      if (hash === undefined) {
        hash = await hashSecret(secret);
        if (hashes.size >= max) hashes.clear();
        hashes.set(secret, hash);
      }
      const hit = known.get(hash) ?? unknown.get(hash);
      if (hit && o.now() < hit.freshUntil) return hit.info;
      // one read per secret at a time; one begun before the last `forget` is not joined
      const r = reading.get(hash);
      if (r && r.epoch === epoch) return r.answer;
      const mine = { epoch, answer: read(hash) };
      reading.set(hash, mine);
      void mine.answer.finally(() => reading.get(hash) === mine && reading.delete(hash)).catch(() => undefined);
      return mine.answer;
    },
    forget() {
      epoch++;
      for (const e of known.values()) e.freshUntil = -Infinity;
      for (const e of unknown.values()) e.freshUntil = -Infinity;
    },
    size: () => known.size + unknown.size,
  };
}

/** Tells this instance's key cache, when the app has a router, that a key changed. */
export function keysChanged(deps: AppDeps): void {
  const keys = deps.router?.keys;
  if (keys && "forget" in keys && typeof keys.forget === "function") (keys as KeyCache).forget();
}
