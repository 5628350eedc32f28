// The simulated agents' HTTP client (bench/fleet-agents.ts): keep-alive connections to each API instance, each call
// going to the next instance round-robin, as behind a load balancer without affinity (`via`: the instance that
// answered).
import { Client } from "undici";

/**
 * Keep-alive connections to one origin with no bound: a call takes the connection freed last or opens one, as each
 * real agent has its own. Not undici's Pool: it looks for a free connection from the first it opened on every call —
 * with thousands of long-polls held per origin that scan, and the reconnects of the long-idle connections it finds
 * first, took the benchmark's agent processes 0.5 s and more of CPU in a burst of status reports after a change, and
 * that wait counted as the API's.
 */
function connections(origin: string) {
  const free: Client[] = [];
  const all = new Set<Client>();
  const open = () => {
    const c = new Client(origin, { connect: { timeout: 30_000 }, keepAliveTimeout: 4_000 });
    all.add(c);
    return c;
  };
  return {
    async request(options: Parameters<Client["request"]>[0]) {
      const c = free.pop() ?? open();
      try {
        const r = await c.request(options);
        return { status: r.statusCode, text: await r.body.text() };
      } finally {
        free.push(c);
      }
    },
    close: () => Promise.all([...all].map((c) => c.destroy())),
  };
}

/** A client of the API instances at `origins`, each call to the next one. */
export function httpPools(origins: string[]) {
  const pools = origins.map(connections);
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
      return { ...r, via };
    },
    /** Closes every connection. */
    close: () => Promise.all(pools.map((p) => p.close())),
  };
}
