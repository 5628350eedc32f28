// The OpenAI-compatible endpoints on WHATWG Request/Response, for the Worker (the Node entry uses handler.ts on
// node:http instead): the same decisions (request.ts), the engine's response streamed through the usage tap. Work that
// must outlive the response (writing usage) is handed to `waitUntil`.
import type { Log } from "../log.js";
import { openAiError } from "./errors.js";
import { type Cancel, failureKind, type UpstreamResponse } from "./failures.js";
import {
  admit,
  authenticate,
  dispatch,
  midStreamError,
  modelList,
  notSent,
  PASS_HEADERS,
  POSTS,
  type Refusal,
  type Routed,
  recordUsage,
  refuse,
  route,
  tooLarge,
} from "./request.js";
import type { ApiKeyInfo, RouterDeps } from "./types.js";
import { jsonTap, sseTap } from "./usage-tap.js";

export type FetchRouter = (
  request: Request,
  requestId: string,
  waitUntil: (work: Promise<unknown>) => void,
) => Promise<Response>;

/** An OpenAI-style error response. */
const failure = (r: Refusal) =>
  Response.json(openAiError(r.message, r.type, r.code), { status: r.status, headers: r.headers });

/** The Cancel of one request, over an AbortController. */
class FetchCancel implements Cancel {
  private readonly controller = new AbortController();
  get aborted() {
    return this.controller.signal.aborted;
  }
  once(_: "abort", listener: () => void) {
    this.controller.signal.addEventListener("abort", listener, { once: true });
  }
  removeListener(_: "abort", listener: () => void) {
    this.controller.signal.removeEventListener("abort", listener);
  }
  abort() {
    this.controller.abort();
  }
}

/** The body as text, or the 413 when it is larger than `max` bytes. */
async function readBody(request: Request, max: number): Promise<string | Refusal> {
  if (Number(request.headers.get("content-length") ?? 0) > max) return tooLarge(max);
  const bytes = new Uint8Array(await request.arrayBuffer());
  return bytes.length > max ? tooLarge(max) : new TextDecoder().decode(bytes);
}

/** Creates the fetch router over router state (on the Worker: built per request over per-isolate parts). */
export function createFetchRouter(r: RouterDeps, o: { now: () => number; log: Log }): FetchRouter {
  /** The engine's response as the client's: its body passed through the tap; the books closed when it ends. */
  function relay(
    up: UpstreamResponse,
    routed: Routed,
    key: ApiKeyInfo,
    cancel: FetchCancel,
    start: number,
    finish: () => void,
    started: () => void,
    waitUntil: (w: Promise<unknown>) => void,
  ): Response {
    const { model } = routed;
    const sse = String(up.headers["content-type"] ?? "").includes("text/event-stream");
    const tap = sse ? sseTap(routed.injected) : jsonTap();
    const headers = new Headers();
    for (const h of PASS_HEADERS) {
      const v = up.headers[h];
      if (typeof v === "string") headers.set(h, v);
    }
    if (sse) headers.set("cache-control", "no-cache");
    const chunks = up.body[Symbol.asyncIterator]();
    let closed = false;
    let firstAt: number | undefined;
    const close = (status: number) => {
      if (closed) return;
      closed = true;
      finish();
      r.metrics.requests.inc({ model, code: String(status) });
      r.metrics.duration.observe({ model }, (performance.now() - start) / 1000);
      const usage = status === up.status ? tap.end().usage : undefined;
      const ttftMs = firstAt === undefined ? undefined : firstAt - start;
      r.usage.observe(key.name, model, { status, ttftMs, usage }, o.now());
      if (status === up.status) recordUsage(r, key, model, usage, o.now());
      waitUntil(r.usage.flush().catch((e: unknown) => o.log.warn("router: usage not written", { error: String(e) })));
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          for (;;) {
            const next = await chunks.next();
            if (firstAt === undefined) {
              firstAt = performance.now();
              started();
            }
            if (next.done) {
              const rest = tap.end().rest;
              if (rest.length) controller.enqueue(rest);
              controller.close();
              return close(up.status);
            }
            const bytes = tap.chunk(next.value);
            if (bytes.length) return controller.enqueue(bytes);
          }
        } catch (e) {
          const kind = cancel.aborted ? "aborted" : failureKind(e);
          r.metrics.upstreamErrors.inc({ model, kind });
          // after the first byte nothing is retried: a stream ends with an error event the OpenAI SDKs raise
          if (sse) {
            controller.enqueue(new TextEncoder().encode(midStreamError(kind)));
            controller.close();
          } else controller.error(e);
          close(502);
        }
      },
      cancel() {
        // the client went away: stop the engine's work too
        cancel.abort();
        up.body.destroy();
        close(499);
      },
    });
    return new Response(body, { status: up.status, headers });
  }

  async function forward(
    request: Request,
    path: string,
    key: ApiKeyInfo,
    requestId: string,
    start: number,
    waitUntil: (w: Promise<unknown>) => void,
  ): Promise<Response> {
    const text = await readBody(request, r.maxRequestBytes);
    if (typeof text !== "string") return failure(text);
    const flush = () =>
      waitUntil(r.usage.flush().catch((e: unknown) => o.log.warn("router: usage not written", { error: String(e) })));
    const routed = await route(r, key, path, text, o.now());
    if ("refused" in routed) {
      if (routed.model) {
        r.usage.observe(key.name, routed.model, { status: routed.status }, o.now());
        flush();
      }
      return failure(routed);
    }
    const { model } = routed;
    const cancel = new FetchCancel();
    // a client that goes away while its request waits for a slot leaves the queue (where the runtime tells: on
    // workerd, request.signal may never abort, and the wait ends on its deadline)
    const leave = () => cancel.abort();
    request.signal.addEventListener("abort", leave, { once: true });
    const slot = await admit(r, key, routed, cancel);
    request.signal.removeEventListener("abort", leave);
    if (!("release" in slot)) {
      const status = "refused" in slot ? slot.status : 499;
      r.usage.observe(key.name, model, { status }, o.now());
      flush();
      return failure(
        "refused" in slot ? slot : refuse(502, "the request was cancelled", "server_error", "upstream_unavailable"),
      );
    }
    r.metrics.inflight.inc({ model });
    const headers = {
      "content-type": "application/json",
      accept: request.headers.get("accept") ?? "application/json",
      "x-request-id": requestId,
    };
    const session = request.headers.get("x-session-id") ?? undefined;
    const sent = await dispatch(r, routed, path, headers, session, cancel, slot);
    if (!("res" in sent)) {
      r.metrics.inflight.dec({ model });
      const refusal = notSent(sent);
      r.metrics.requests.inc({ model, code: String(refusal?.status ?? 499) });
      r.usage.observe(key.name, model, { status: refusal?.status ?? 499 }, o.now());
      flush();
      return failure(refusal ?? refuse(502, "the request was cancelled", "server_error", "upstream_unavailable"));
    }
    r.metrics.firstByte.observe({ model }, (performance.now() - start) / 1000);
    const finish = () => {
      sent.done();
      r.metrics.inflight.dec({ model });
    };
    return relay(sent.res, routed, key, cancel, start, finish, sent.started, waitUntil);
  }

  return async (request, requestId, waitUntil) => {
    const start = performance.now();
    try {
      const key = await authenticate(r, request.headers.get("authorization"), o.now());
      if ("refused" in key) return failure(key);
      const path = new URL(request.url).pathname;
      if (request.method === "POST" && POSTS.has(path))
        return await forward(request, path, key, requestId, start, waitUntil);
      if (path === "/v1/models" && (request.method === "GET" || request.method === "HEAD")) {
        const body = modelList(await r.table.get(), key);
        return new Response(request.method === "HEAD" ? null : body, {
          headers: { "content-type": "application/json" },
        });
      }
      return failure(refuse(404, `no such endpoint: ${request.method} ${path}`, "not_found_error", "unknown_endpoint"));
    } catch (e) {
      o.log.error("router request failed", { error: String(e), path: request.url });
      return failure(refuse(502, "the router could not serve this request", "server_error", "router_error"));
    }
  };
}
