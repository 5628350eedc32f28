// The router of one Worker isolate. What is plain data lives as long as the isolate — the endpoint table, outstanding
// counts and quarantine, per-key rate limits, the fair queue's slots and waiters, metrics; what does I/O is made per request (API key lookups, the usage
// write handed to waitUntil), since a Worker may not use one request's I/O in another.
import type { Store } from "../db/client.js";
import type { Log } from "../log.js";
import { createBalancer } from "./balancer.js";
import { DEFAULT_TIMEOUTS, type Timeouts } from "./failures.js";
import { createFairQueue } from "./fair-queue.js";
import { createFetchRouter, type FetchRouter } from "./fetch-handler.js";
import { createFetchUpstream } from "./fetch-upstream.js";
import { createKeyStore } from "./keys.js";
import { createLimiter } from "./limits.js";
import type { RouterMetrics } from "./metric-defs.js";
import { createIsolateTableCache, readTable } from "./table.js";
import type { RouterDeps } from "./types.js";
import { createUsageRecorder } from "./usage.js";

export type IsolateRouterOptions = {
  now: () => number;
  log: Log;
  metrics: RouterMetrics;
  maxAttempts: number;
  maxRequestBytes: number;
  maxInflightPerReplica: number;
  queueTimeoutMs: number;
  timeouts?: Partial<Timeouts>;
};

/** The fetch router of a Worker isolate over `store`. */
export function createIsolateRouter(store: Store, o: IsolateRouterOptions): FetchRouter {
  const shared = {
    table: createIsolateTableCache(() => readTable(store.db, o.now()), { now: o.now, log: o.log }),
    limiter: createLimiter(),
    balancer: createBalancer({ now: o.now, quarantineMs: 5000 }),
    fairQueue: createFairQueue({ now: o.now, timeoutMs: o.queueTimeoutMs }),
    upstream: createFetchUpstream({ ...DEFAULT_TIMEOUTS, ...o.timeouts }),
    metrics: o.metrics,
    maxAttempts: o.maxAttempts,
    maxRequestBytes: o.maxRequestBytes,
    maxInflightPerReplica: o.maxInflightPerReplica,
  };
  return (request, requestId, waitUntil) => {
    const r: RouterDeps = {
      ...shared,
      keys: createKeyStore(store, { now: o.now, log: o.log }),
      usage: createUsageRecorder(store, { flushMs: 0, log: o.log }),
    };
    return createFetchRouter(r, o)(request, requestId, waitUntil);
  };
}
