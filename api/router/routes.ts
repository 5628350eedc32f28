// The OpenAI-compatible endpoints: /v1/models and the POST endpoints, routed by the body's `model` to a ready
// replica's rank-0 endpoint. Bodies pass through unchanged (except `stream_options.include_usage`, asked for so usage
// can be counted); responses stream through as they arrive.
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../deps.js";
import type { Balancer } from "./balancer.js";
import { errorResponse, openAiError } from "./errors.js";
import type { RouterMetrics } from "./metrics.js";
import type { TableCache } from "./table.js";
import type { ApiKeyInfo, Endpoint, KeyStore, Limiter, UsageRecorder } from "./types.js";
import { failureKind, retriable, type Upstream, type UpstreamResponse } from "./failures.js";
import { jsonTap, sseTap, type Tap } from "./usage-tap.js";

export type RouterDeps = {
  table: TableCache;
  keys: KeyStore;
  limiter: Limiter;
  usage: UsageRecorder;
  balancer: Balancer;
  upstream: Upstream;
  metrics: RouterMetrics;
  /** Replicas tried per request before giving up (only failures before the first byte are retried). */
  maxAttempts: number;
  maxRequestBytes: number;
};

type RouterEnv = AppEnv & { Variables: { key: ApiKeyInfo } };

const POSTS = ["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses"] as const;
const STREAMS_USAGE = new Set(["/v1/chat/completions", "/v1/completions"]);
const PASS_HEADERS = ["content-type", "openai-model", "openai-processing-ms", "x-request-id"];

const routerOf = (c: Context<RouterEnv>) => c.var.deps.router!;

/** Checks the API key: present, known, not expired. */
async function authenticate(c: Context<RouterEnv>, next: () => Promise<void>) {
  const r = c.var.deps.router;
  if (!r) return errorResponse(c, 503, "this deployment of llmgw has no router (run `llmgw serve`)", "service_unavailable", "router_unavailable");
  const m = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  if (!m) return errorResponse(c, 401, "missing API key: send `Authorization: Bearer llmgw_key_…`", "authentication_error", "missing_api_key");
  let key: ApiKeyInfo | undefined;
  try {
    key = await r.keys.identify(m[1]!);
  } catch {
    return errorResponse(c, 503, "cannot check the API key now: the database is unreachable", "service_unavailable", "keys_unavailable", { "retry-after": "5" });
  }
  if (!key) return errorResponse(c, 401, "invalid API key", "authentication_error", "invalid_api_key");
  if (key.expiresAt !== undefined && key.expiresAt <= c.var.deps.now()) return errorResponse(c, 401, `API key ${key.name} has expired`, "authentication_error", "expired_api_key");
  c.set("key", key);
  await next();
}

const allowed = (key: ApiKeyInfo, model: string) => !key.models || key.models.includes(model);

/** The ready endpoints for `model`, or the error response saying why there are none. */
async function endpointsFor(c: Context<RouterEnv>, model: string): Promise<Endpoint[] | Response> {
  const table = await routerOf(c).table.get();
  const ready = table.ready.get(model);
  if (ready?.length) return ready;
  const why = table.declared.get(model);
  if (why === undefined) return errorResponse(c, 404, `The model \`${model}\` does not exist`, "not_found_error", "model_not_found");
  return errorResponse(c, 503, `no ready replica of ${model}: ${why}`, "service_unavailable", "no_ready_replica", { "retry-after": "5" });
}

type Sent = { ep: Endpoint; done: () => void; res: UpstreamResponse } | { aborted: true } | { failed: string; message: string };

/** Sends the request to a ready replica, trying another one when the connection failed before the first byte. */
async function dispatch(c: Context<RouterEnv>, endpoints: Endpoint[], path: string, body: string, abort: AbortController): Promise<Sent> {
  const r = routerOf(c);
  const tried = new Set<string>();
  const headers = { "content-type": "application/json", accept: c.req.header("accept") ?? "application/json", "x-request-id": c.var.requestId };
  const session = c.req.header("x-session-id");
  let last: string = "no replica could be reached";
  for (let attempt = 0; attempt < r.maxAttempts; attempt++) {
    const ep = r.balancer.pick(endpoints, tried, session);
    if (!ep) break;
    if (attempt > 0) r.metrics.retries.inc();
    const done = r.balancer.begin(ep.url);
    try {
      return { ep, done, res: await r.upstream.send(ep.url, path, body, headers, abort.signal) };
    } catch (e) {
      done();
      const kind = failureKind(e);
      r.metrics.upstreamErrors.inc({ model: ep.model, kind });
      if (abort.signal.aborted) return { aborted: true };
      if (!retriable(kind)) return { failed: kind, message: `replica ${ep.replicaId} failed: ${kind.replace(/_/g, " ")}` };
      r.balancer.quarantine(ep.url);
      tried.add(ep.url);
      last = `replica ${ep.replicaId} at ${ep.url}: ${kind}`;
    }
  }
  return { failed: "unreachable", message: `no replica of this model could be reached (last: ${last})` };
}

/** The client's response: the engine's status and content type, its body streamed through the usage tap. */
function relay(c: Context<RouterEnv>, model: string, up: UpstreamResponse, tap: Tap, finish: (usage: ReturnType<Tap["end"]>["usage"], status: number) => void, abort: AbortController) {
  const sse = String(up.headers["content-type"] ?? "").includes("text/event-stream");
  const out = new Headers();
  for (const h of PASS_HEADERS) {
    const v = up.headers[h];
    if (typeof v === "string") out.set(h, v);
  }
  if (sse) {
    out.set("cache-control", "no-cache");
    out.set("x-accel-buffering", "no");
  }
  // said outright, so the Node adapter streams at once instead of first trying to read a short body whole
  out.set("transfer-encoding", "chunked");
  const it = up.body[Symbol.asyncIterator]();
  let closed = false;
  const end = (status: number) => {
    if (closed) return;
    closed = true;
    finish(tap.end().usage, status);
  };
  const stream = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      try {
        const { value, done } = await it.next();
        if (done) {
          const rest = tap.end();
          if (rest.rest.length) ctrl.enqueue(rest.rest);
          closed = true;
          finish(rest.usage, up.status);
          return ctrl.close();
        }
        const bytes = tap.chunk(value as Uint8Array);
        if (bytes.length) ctrl.enqueue(bytes);
      } catch (e) {
        const kind = failureKind(e);
        routerOf(c).metrics.upstreamErrors.inc({ model, kind: abort.signal.aborted ? "aborted" : kind });
        end(abort.signal.aborted ? 499 : 502);
        if (sse && !abort.signal.aborted) {
          // after the first byte nothing is retried: the stream ends with an error event the OpenAI SDKs raise
          ctrl.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(openAiError(`the replica failed mid-stream (${kind.replace(/_/g, " ")})`, "server_error", "upstream_error"))}\n\n`));
          ctrl.close();
        } else ctrl.error(e);
      }
    },
    cancel() {
      abort.abort();
      up.body.destroy();
      end(499);
    },
  });
  return new Response(stream, { status: up.status, headers: out });
}

/** One POST endpoint: authenticate, parse, pick, forward, relay. */
async function forward(c: Context<RouterEnv>, path: string) {
  const r = routerOf(c);
  const start = performance.now();
  const text = await c.req.text();
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    body = parsed as Record<string, unknown>;
  } catch {
    return errorResponse(c, 400, "the request body must be a JSON object", "invalid_request_error", "invalid_json");
  }
  const model = body.model;
  if (typeof model !== "string" || !model) return errorResponse(c, 400, "you must provide a model parameter", "invalid_request_error", "missing_model");
  const key = c.var.key;
  if (!allowed(key, model)) return errorResponse(c, 403, `API key ${key.name} may not use model ${model}`, "permission_error", "model_not_allowed");
  const endpoints = await endpointsFor(c, model);
  if (endpoints instanceof Response) return endpoints;
  const admitted = r.limiter.admit(key, c.var.deps.now());
  if (!admitted.ok) {
    r.metrics.requests.inc({ model, code: "429" });
    return errorResponse(c, 429, `rate limit of API key ${key.name} reached (${admitted.limit} per minute)`, "rate_limit_error", "rate_limit_exceeded", { "retry-after": String(admitted.retryAfterS) });
  }
  const streaming = body.stream === true;
  const options = (body.stream_options ?? {}) as Record<string, unknown>;
  const injected = streaming && STREAMS_USAGE.has(path) && options.include_usage !== true;
  const upstreamBody = injected ? JSON.stringify({ ...body, stream_options: { ...options, include_usage: true } }) : text;

  const abort = new AbortController();
  // removed when the request ends: a listener left on the request's signal keeps the whole request alive
  const clientGone = () => abort.abort();
  c.req.raw.signal.addEventListener("abort", clientGone, { once: true });
  const forget = () => c.req.raw.signal.removeEventListener("abort", clientGone);
  r.metrics.inflight.inc({ model });
  const sent = await dispatch(c, endpoints, path, upstreamBody, abort);
  if (!("res" in sent)) {
    forget();
    r.metrics.inflight.dec({ model });
    const status = "aborted" in sent ? 499 : sent.failed === "first_byte_timeout" ? 504 : 502;
    r.metrics.requests.inc({ model, code: String(status) });
    if ("aborted" in sent) return new Response(null, { status: 499 });
    return errorResponse(c, status as 502 | 504, sent.message, "server_error", sent.failed === "first_byte_timeout" ? "upstream_timeout" : "upstream_unavailable");
  }
  r.metrics.firstByte.observe({ model }, (performance.now() - start) / 1000);
  const sse = String(sent.res.headers["content-type"] ?? "").includes("text/event-stream");
  return relay(c, model, sent.res, sse ? sseTap(injected) : jsonTap(), (usage, status) => {
    forget();
    sent.done();
    r.metrics.inflight.dec({ model });
    r.metrics.requests.inc({ model, code: String(status) });
    r.metrics.duration.observe({ model }, (performance.now() - start) / 1000);
    if (usage) {
      const now = c.var.deps.now();
      r.usage.record(key.name, model, usage, now);
      r.limiter.spend(key, usage.promptTokens + usage.completionTokens, now);
    }
  }, abort);
}

const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;

/** The /v1 router, mounted by createApp. */
export function routerRoutes() {
  const app = new Hono<RouterEnv>();
  app.use("/v1/*", async (c, next) => {
    const max = c.var.deps.router?.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
    return bodyLimit({ maxSize: max, onError: (cc) => errorResponse(cc, 413, `request body larger than ${max} bytes`, "invalid_request_error", "request_too_large") })(c, next);
  });
  app.use("/v1/*", authenticate);
  app.get("/v1/models", async (c) => {
    const table = await routerOf(c).table.get();
    const created = Math.floor(table.readAt / 1000);
    const data = [...table.ready.keys()].filter((m) => allowed(c.var.key, m)).sort().map((id) => ({ id, object: "model", created, owned_by: "llmgw" }));
    return c.json({ object: "list", data });
  });
  for (const path of POSTS) app.post(path, (c) => forward(c, path));
  app.all("/v1/*", (c) => errorResponse(c, 404, `no such endpoint: ${c.req.method} ${c.req.path}`, "not_found_error", "unknown_endpoint"));
  return app;
}
