// What the OpenAI-compatible router needs from outside, built once per API instance by the Node entry (and by tests):
// the endpoint table, API keys, limits, the fair queue, usage, the upstream client and metrics. No module singletons.
import type { Upstream } from "./failures.js";
import type { FairQueue } from "./fair-queue.js";
import type { RouterMetrics } from "./metric-defs.js";

/** One ready replica a model's requests can go to (its rank 0's HTTP endpoint). */
export type Endpoint = { replicaId: string; deployment: string; model: string; url: string };

/** An API key as the router checks it; `models` absent means every model. */
export type ApiKeyInfo = {
  /**
   * What stays the same for the key's whole life, rotations included, and is never another key's: its name and when
   * it was made. Per-key state (rate-limit counters) belongs to it, so that a key deleted and made again under the
   * same name starts afresh. Keys read from the database always have one; one made by hand without it is counted by
   * its name.
   */
  id?: string;
  name: string;
  models?: string[];
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /** Requests of the key served at once on this instance, over every model; more wait in the fair queue. */
  maxConcurrent?: number;
  expiresAt?: number;
};

/** Why a request may not go on now (a limit of its key), or that it may. */
export type LimitDecision = { ok: true } | { ok: false; retryAfterS: number; limit: "requests" | "tokens" };

export type KeyStore = {
  /** The key a presented secret belongs to (expired keys included: the caller checks), or undefined. */
  identify(secret: string): Promise<ApiKeyInfo | undefined>;
};

export type Limiter = {
  /** Takes one request from the key's per-minute budget, refusing when its requests or tokens are spent. */
  admit(key: ApiKeyInfo, now: number): LimitDecision;
  /** Counts tokens a finished response used against the key's per-minute token budget. */
  spend(key: ApiKeyInfo, tokens: number, now: number): void;
};

export type Usage = { promptTokens: number; completionTokens: number };

/**
 * How one request for a routed model ended: its status (499: the client went away), the ms from its arrival to the
 * first byte of the response body, when one came, and the usage the engine reported.
 */
export type Outcome = { status: number; ttftMs?: number | undefined; usage?: Usage | undefined };

export type UsageRecorder = {
  /** Adds one response's usage in memory; written to the database in batches, never per request. */
  record(key: string, model: string, usage: Usage, now: number): void;
  /** Adds one request's outcome to the recent usage (5-minute buckets) in memory; written with the usage. */
  observe(key: string, model: string, outcome: Outcome, now: number): void;
  /** Writes what is pending now (also called on shutdown). */
  flush(): Promise<void>;
};

/** How the router picks among a model's replicas (the model spec's `routing` and `prefixRouting`, defaults filled). */
export type Routing =
  | { policy: "p2c" }
  | {
      policy: "prefix";
      blockChars: number;
      keyBlocks: number;
      keyOn: "conversation" | "prompt";
      loadFactor: number;
      slack: number;
      queueFactor: number;
    };

/**
 * A request's prefix key and the bound its replica is held to (api/router/balancer.ts byPrefix): the load factor and
 * slack in requests, and the characters of its own prompt (`own`) × `queueFactor` that its replica's queue of prompts
 * not yet begun may exceed the shortest such queue's by.
 */
export type PrefixPick = { key: number; loadFactor: number; slack: number; own?: number; queueFactor?: number };

export type EndpointTable = {
  /** Ready endpoints by served model name. */
  ready: Map<string, Endpoint[]>;
  /** Each served model's routing, where its spec says one (the default, prefix, elsewhere). */
  routing?: Map<string, Routing>;
  /** Every served model name that has a deployment, with why it has no ready replica when it has none. */
  declared: Map<string, string>;
  readAt: number;
};

export type TableCache = {
  /** The current table: the cached one while fresh, else re-read (or the last one, when the database fails). */
  get(): Promise<EndpointTable>;
  /** Null while the last read worked; else since when, and why, the table is stale. */
  staleness(): { since: number; error: string } | null;
  close(): void;
};

/** One request's count on its replica: call it to end the request; `started` when its response's first byte came. */
export type Flight = (() => void) & { started(): void };

/** Chooses a replica for each request and counts what is outstanding on each (per API instance). */
export type Balancer = {
  /** Picks an endpoint not in `exclude` (endpoints already tried by this request). */
  pick(
    endpoints: readonly Endpoint[],
    exclude: ReadonlySet<string>,
    session?: string,
    prefix?: PrefixPick,
  ): Endpoint | undefined;
  /**
   * Counts a request to `url` as outstanding, and its prompt's `chars` (its own text) as queued there until it
   * `started` (its response's first byte: the engine has read its prompt); the returned function ends it (once, whatever
   * calls it).
   */
  begin(url: string, chars?: number): Flight;
  /** Keeps new requests away from `url` for a short while (it refused or reset a connection). */
  quarantine(url: string): void;
  inflight(url: string): number;
  /** Characters of the prompts sent to `url` from this instance whose response has not begun. */
  queued(url: string): number;
  /** Every outstanding count (for tests and metrics). */
  outstanding(): Map<string, number>;
};

/** Everything the router needs on one API instance. */
export type RouterDeps = {
  table: TableCache;
  keys: KeyStore;
  limiter: Limiter;
  usage: UsageRecorder;
  balancer: Balancer;
  /** Slots per model and per key, and the round-robin queues of the requests waiting for one (fair-queue.ts). */
  fairQueue: FairQueue;
  upstream: Upstream;
  metrics: RouterMetrics;
  /** Replicas tried per request before giving up (only failures before the first byte are retried). */
  maxAttempts: number;
  maxRequestBytes: number;
  /** A model's slots on this instance per ready replica: past them (on every replica, on average) requests queue. */
  maxInflightPerReplica: number;
};
