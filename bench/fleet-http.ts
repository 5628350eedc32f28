// The simulated agents' HTTP client (bench/fleet-agents.ts): undici pools with keep-alive connections, one per API
// instance, each call going to the next instance round-robin, as behind a load balancer without affinity (`via`: the
// instance that answered).
import { Pool } from "undici";

/**
 * Keep-alive pools to each origin with no bound on connections: every call finds or opens one at once, as each real
 * agent has its own. (A bound — it was every agent's long-poll plus 256 — made a burst of status reports after a
 * change queue the heartbeats in the benchmark's own client, and counted that wait as the API's.)
 */
export function httpPools(origins: string[]) {
  const pools = origins.map(
    (o) => new Pool(o, { connections: null, connect: { timeout: 30_000 }, keepAliveTimeout: 4_000 }),
  );
  let next = 0;
  return {
    async call(method: string, path: string, token: string, body?: unknown, timeoutMs = 30_000, index = 0) {
      const via = next++ % pools.length;
      const r = await pools[via]!.request({
        method: method as "GET",
        path,
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          // as the real client: the last index seen rides on every call but the registration
          ...(index ? { "x-llmgw-index": String(index) } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await r.body.text();
      return { status: r.statusCode, text, via };
    },
    /** Closes every connection. */
    close: () => Promise.all(pools.map((p) => p.destroy())),
  };
}
