// The router's dependencies for one Node API instance: endpoint table cache, API keys, limits, usage, balancer,
// upstream client and metrics, and how to stop them. Only the Node entry (and tests) call this.
import { Registry } from "prom-client";
import type { Store } from "../db/client.js";
import type { Log } from "../log.js";
import { createBalancer } from "./balancer.js";
import { DEFAULT_TIMEOUTS, type Timeouts } from "./failures.js";
import { createFairQueue, DEFAULT_MAX_INFLIGHT_PER_REPLICA, DEFAULT_QUEUE_TIMEOUT_MS } from "./fair-queue.js";
import { createRouterHandler, type RouterHandler } from "./handler.js";
import { createKeyStore } from "./keys.js";
import { createLimiter } from "./limits.js";
import { createRouterMetrics } from "./metrics.js";
import { createTableCache, readTable } from "./table.js";
import type { RouterDeps } from "./types.js";
import { createUpstream } from "./upstream.js";
import { createUsageRecorder } from "./usage.js";

export type RouterOptions = {
  now: () => number;
  log: Log;
  /** How long the endpoint table is used before it is read again (it is also refreshed in the background). */
  tableTtlMs?: number;
  quarantineMs?: number;
  maxAttempts?: number;
  maxRequestBytes?: number;
  timeouts?: Partial<Timeouts>;
  usageFlushMs?: number;
  registry?: Registry;
  /** A model's slots per ready replica before requests queue (default 64). */
  maxInflightPerReplica?: number;
  /** How long a request waits in the fair queue before its 429 (default 30 s; 0: no waiting). */
  queueTimeoutMs?: number;
};

/** Builds the router of one API instance; `close` stops its timers, writes pending usage and closes connections. */
export function createRouter(
  store: Store,
  o: RouterOptions,
): { router: RouterDeps; handler: RouterHandler; registry: Registry; close(): Promise<void> } {
  const registry = o.registry ?? new Registry();
  const table = createTableCache(() => readTable(store.db, o.now()), {
    now: o.now,
    log: o.log,
    ttlMs: o.tableTtlMs ?? 1000,
  });
  const usage = createUsageRecorder(store, {
    log: o.log,
    ...(o.usageFlushMs !== undefined ? { flushMs: o.usageFlushMs } : {}),
  });
  const upstream = createUpstream({ ...DEFAULT_TIMEOUTS, ...o.timeouts });
  const router: RouterDeps = {
    table,
    keys: createKeyStore(store, { now: o.now, log: o.log }),
    limiter: createLimiter(),
    usage,
    balancer: createBalancer({ now: o.now, quarantineMs: o.quarantineMs ?? 5000 }),
    fairQueue: createFairQueue({ now: o.now, timeoutMs: o.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS }),
    upstream,
    metrics: createRouterMetrics(registry),
    maxAttempts: o.maxAttempts ?? 3,
    maxRequestBytes: o.maxRequestBytes ?? 16 * 1024 * 1024,
    maxInflightPerReplica: o.maxInflightPerReplica ?? DEFAULT_MAX_INFLIGHT_PER_REPLICA,
  };
  return {
    router,
    handler: createRouterHandler(router, { now: o.now, log: o.log }),
    registry,
    async close() {
      table.close();
      await usage.close();
      await upstream.close();
    },
  };
}
