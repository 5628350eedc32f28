// Both routers — the node:http handler of `llmgw serve` and the Worker's fetch router — over deps a test builds: one
// replica of `m` (routed by its default policy) behind an upstream the test answers, and its own clock.
import { createServer, type Server } from "node:http";
import { Registry } from "prom-client";
import { createBalancer } from "../../api/router/balancer.js";
import type { Upstream } from "../../api/router/failures.js";
import { createFairQueue, type SetTimer } from "../../api/router/fair-queue.js";
import { createFetchRouter } from "../../api/router/fetch-handler.js";
import { createRouterHandler } from "../../api/router/handler.js";
import { createLimiter } from "../../api/router/limits.js";
import { createRouterMetrics } from "../../api/router/metrics.js";
import type { RouterDeps } from "../../api/router/types.js";
import { silentLog } from "./app.js";

export const ENDPOINT = { replicaId: "r0", deployment: "m", model: "m", url: "http://engine.invalid" };

/** Router deps with ENDPOINT the one ready replica of `m`, `send` its upstream and `identify` its keys. */
export function oneReplicaDeps(o: {
  send: Upstream["send"];
  identify: RouterDeps["keys"]["identify"];
  maxInflightPerReplica: number;
  now?: () => number;
  setTimer?: SetTimer;
  registry?: Registry;
}): RouterDeps {
  const now = o.now ?? (() => 0);
  return {
    table: {
      get: async () => ({ ready: new Map([["m", [ENDPOINT]]]), declared: new Map([["m", ""]]), readAt: 0 }),
      staleness: () => null,
      close() {},
    },
    keys: { identify: o.identify },
    limiter: createLimiter(),
    usage: { record() {}, observe() {}, flush: async () => {} },
    balancer: createBalancer({ now }),
    fairQueue: createFairQueue({ now, timeoutMs: 30_000, ...(o.setTimer ? { setTimer: o.setTimer } : {}) }),
    upstream: { send: o.send, close: async () => {} },
    metrics: createRouterMetrics(o.registry ?? new Registry()),
    maxAttempts: 1,
    maxRequestBytes: 100_000,
    maxInflightPerReplica: o.maxInflightPerReplica,
  };
}

/** Sends a request to a router: `path` on its origin. */
export type RouterCall = (path: string, init: RequestInit) => Promise<Response>;

const servers: Server[] = [];
/** Closes the servers nodeRouter() started (a test file's afterAll). */
export const closeRouterServers = () => Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));

/** The node:http handler on a free port. */
export async function nodeRouter(r: RouterDeps): Promise<RouterCall> {
  const server = createServer(createRouterHandler(r, { now: () => 0, log: silentLog }));
  servers.push(server);
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return (path, init) => fetch(`${origin}${path}`, init);
}

/** The Worker's fetch router, called in-process. */
export async function fetchRouter(r: RouterDeps): Promise<RouterCall> {
  const router = createFetchRouter(r, { now: () => 0, log: silentLog });
  return (path, init) => router(new Request(`http://llmgw.test${path}`, init), "rid", () => {});
}

/** Both routers, for describe.each. */
export const BOTH_ROUTERS = [
  ["the node:http handler", nodeRouter],
  ["the fetch router", fetchRouter],
] as const;
