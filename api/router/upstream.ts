// Calls to engines through one undici Agent per API instance: pooled keep-alive connections per endpoint, and the
// three timeouts (connect, first byte, idle between chunks).
// (Node only: the Worker build has no router.)
import { Agent } from "undici";
import { afterWrite, DEFAULT_TIMEOUTS, type Timeouts, type Upstream } from "./failures.js";

/**
 * The body as undici writes an iterable, with `w.done` set once the whole request was handed to the socket (the
 * engine may have it). undici asks for the next chunk only after writing one — or after the socket closed under a
 * full buffer — and checks the socket for an error before writing the next: so the empty second chunk is asked for
 * in both cases, and only a healthy socket gets as far as asking what follows it.
 */
function* writtenOnce(body: string, w: { done: boolean }) {
  yield body;
  yield "";
  w.done = true;
}

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
      const written = { done: false };
      try {
        const r = await agent.request({
          origin: url,
          path,
          method: "POST",
          headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
          // undici writes an iterable body (its types list only the other kinds)
          body: writtenOnce(body, written) as unknown as string,
          signal,
        });
        return { status: r.statusCode, headers: r.headers, body: r.body };
      } catch (e) {
        throw written.done ? afterWrite(e) : e;
      }
    },
    close: () => agent.close(),
  };
}
