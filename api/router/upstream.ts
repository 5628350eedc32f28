// Calls to engines through one undici Agent per API instance: pooled keep-alive connections per endpoint, and the
// three timeouts (connect, first byte, idle between chunks).
// (Node only: the Worker build has no router.)
import { Agent } from "undici";
import { DEFAULT_TIMEOUTS, type Timeouts, type Upstream } from "./failures.js";

/** The upstream client of one API instance. */
export function createUpstream(t: Timeouts = DEFAULT_TIMEOUTS): Upstream {
  const agent = new Agent({
    connect: { timeout: t.connectMs },
    headersTimeout: t.firstByteMs,
    bodyTimeout: t.idleMs,
    keepAliveTimeout: 30_000,
    connections: 256,
  });
  return {
    async send(url, path, body, headers, signal) {
      const r = await agent.request({ origin: url, path, method: "POST", headers, body, signal });
      return { status: r.statusCode, headers: r.headers, body: r.body };
    },
    close: () => agent.close(),
  };
}
