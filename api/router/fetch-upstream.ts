// Calls to engines with the global fetch, for where there is no undici Agent (a Worker). The first-byte timeout
// aborts the call; the idle timeout between chunks ends the body. Errors are tagged with the failure kinds the router
// knows: fetch cannot tell a refused connection from a reset one, and both mean no engine answered.
import { type Cancel, DEFAULT_TIMEOUTS, type Timeouts, type Upstream } from "./failures.js";

/** An error carrying a failure kind in `code`, as failureKind() reads it. */
const tagged = (code: string, message: string, cause?: unknown) =>
  Object.assign(new Error(message, { cause }), { code });

/** The body's chunks, ending with an idle-timeout error when none comes for `idleMs`. */
async function* withIdleTimeout(body: ReadableStream<Uint8Array>, idleMs: number): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const idle = new Promise<never>(
        (_, fail) =>
          (timer = setTimeout(() => fail(tagged("UND_ERR_BODY_TIMEOUT", `no data for ${idleMs} ms`)), idleMs)),
      );
      const next = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** The fetch-based upstream client. */
export function createFetchUpstream(
  t: Timeouts = DEFAULT_TIMEOUTS,
  fetchFn: typeof fetch = (...a) => fetch(...a),
): Upstream {
  return {
    async send(url, path, body, headers, signal: Cancel) {
      const controller = new AbortController();
      const cancel = () => controller.abort();
      signal.once("abort", cancel);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, t.firstByteMs);
      let res: Response;
      try {
        res = await fetchFn(`${url}${path}`, { method: "POST", headers, body, signal: controller.signal });
      } catch (e) {
        signal.removeListener("abort", cancel);
        if (signal.aborted) throw tagged("UND_ERR_ABORTED", "the client went away", e);
        if (timedOut) throw tagged("UND_ERR_HEADERS_TIMEOUT", `no response within ${t.firstByteMs} ms`, e);
        throw tagged("ECONNREFUSED", `cannot reach ${url}: ${e instanceof Error ? e.message : String(e)}`, e);
      } finally {
        clearTimeout(timer);
      }
      const chunks = res.body ? withIdleTimeout(res.body, t.idleMs) : (async function* () {})();
      return {
        status: res.status,
        headers: Object.fromEntries(res.headers),
        body: Object.assign(chunks, {
          destroy() {
            signal.removeListener("abort", cancel);
            void chunks.return(undefined);
          },
        }),
      };
    },
    close: async () => undefined,
  };
}
