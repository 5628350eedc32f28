// The simulated agents' HTTP client (bench/fleet-agents.ts): undici pools with keep-alive connections, one per API
// instance, each call going to the next instance round-robin, as behind a load balancer without affinity.
import { Pool } from "undici";

/** Keep-alive pools to each origin, sized for every agent's long-poll at once plus the other calls. */
export function httpPools(origins: string[], connections: number) {
  const pools = origins.map((o) => new Pool(o, { connections, connect: { timeout: 30_000 }, keepAliveTimeout: 4_000 }));
  let next = 0;
  return {
    async call(method: string, path: string, token: string, body?: unknown, timeoutMs = 30_000, index = 0) {
      const r = await pools[next++ % pools.length]!.request({
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
      return { status: r.statusCode, text };
    },
    /** Closes every connection. */
    close: () => Promise.all(pools.map((p) => p.destroy())),
  };
}
