// The OpenAI-compatible endpoints on a bare node:http handler: /v1/models and the POST endpoints, routed by the body's
// `model` to a ready replica's rank-0 endpoint. Bodies pass through unchanged (except `stream_options.include_usage`,
// asked for so usage can be counted); responses stream through as they arrive, with backpressure.
// This is the hot path of every inference request, so it works on Node's own request and response objects: no WHATWG
// Request/Response or web streams per request (api/http-server.ts puts it in front of the Hono app).
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Log } from "../deps.js";
import { requestIdOf } from "../request-id.js";
import type { Balancer } from "./balancer.js";
import { openAiError, type OpenAiErrorType } from "./errors.js";
import { type Cancel, failureKind, retriable, type Upstream, type UpstreamResponse } from "./failures.js";
import type { RouterMetrics } from "./metrics.js";
import type { TableCache } from "./table.js";
import type { ApiKeyInfo, Endpoint, KeyStore, Limiter, UsageRecorder } from "./types.js";
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

export type RouterHandler = (req: IncomingMessage, res: ServerResponse) => void;

const POSTS = new Set(["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses"]);
const STREAMS_USAGE = new Set(["/v1/chat/completions", "/v1/completions"]);
const PASS_HEADERS = ["content-type", "openai-model", "openai-processing-ms"];

/** True for the paths the router answers (everything else goes to the control API). */
export const isRouterPath = (url: string | undefined) => !!url && (url.startsWith("/v1/") || url === "/v1" || url.startsWith("/v1?"));

type Status = 400 | 401 | 403 | 404 | 413 | 429 | 502 | 503 | 504;

/** Sends an OpenAI-style error (unless the response has already begun). */
function fail(res: ServerResponse, status: Status, message: string, type: OpenAiErrorType, code: string, headers: Record<string, string> = {}) {
  if (res.headersSent) return;
  const body = JSON.stringify(openAiError(message, type, code));
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

const allowed = (key: ApiKeyInfo, model: string) => !key.models || key.models.includes(model);

/** Answers 413 for a body larger than `max` bytes and lets the rest of it drain. */
function tooLarge(req: IncomingMessage, res: ServerResponse, max: number): undefined {
  fail(res, 413, `request body larger than ${max} bytes`, "invalid_request_error", "request_too_large", { connection: "close" });
  req.resume();
  return undefined;
}

/** The request body as text; undefined when it is larger than `max` bytes (after answering 413) or the client left. */
function readBody(req: IncomingMessage, res: ServerResponse, max: number): Promise<string | undefined> {
  if (Number(req.headers["content-length"] ?? 0) > max) return Promise.resolve(tooLarge(req, res, max));
  return new Promise((ok, ko) => {
    const parts: Buffer[] = [];
    let size = 0;
    // inline listeners: no per-request named closures on the hot path
    req
      .on("data", (b: Buffer) => {
        if (size > max) return;
        size += b.length;
        if (size <= max) parts.push(b);
        else ok(tooLarge(req, res, max));
      })
      .once("end", () => ok(size > max ? undefined : Buffer.concat(parts, size).toString("utf8")))
      // a client gone before its body ended: nothing to answer
      .once("error", ko)
      .once("close", () => ok(undefined));
  });
}

/** The Cancel of one request. */
class Abort extends EventEmitter implements Cancel {
  aborted = false;
  abort() {
    if (this.aborted) return;
    this.aborted = true;
    this.emit("abort");
  }
}

type Sent = { ep: Endpoint; done: () => void; res: UpstreamResponse } | { aborted: true } | { failed: string; message: string };

/** Creates the handler of one API instance over its router state. */
export function createRouterHandler(r: RouterDeps, o: { now: () => number; log: Log }): RouterHandler {
  /** Checks the API key: present, known, not expired; answers the error itself when it is not. */
  async function authenticate(req: IncomingMessage, res: ServerResponse): Promise<ApiKeyInfo | undefined> {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    if (!m) return void fail(res, 401, "missing API key: send `Authorization: Bearer llmgw_key_…`", "authentication_error", "missing_api_key");
    let key: ApiKeyInfo | undefined;
    try {
      key = await r.keys.identify(m[1]!);
    } catch {
      return void fail(res, 503, "cannot check the API key now: the database is unreachable", "service_unavailable", "keys_unavailable", { "retry-after": "5" });
    }
    if (!key) return void fail(res, 401, "invalid API key", "authentication_error", "invalid_api_key");
    if (key.expiresAt !== undefined && key.expiresAt <= o.now()) return void fail(res, 401, `API key ${key.name} has expired`, "authentication_error", "expired_api_key");
    return key;
  }

  /** The ready endpoints for `model`, or undefined after answering why there are none. */
  async function endpointsFor(res: ServerResponse, model: string): Promise<Endpoint[] | undefined> {
    const table = await r.table.get();
    const ready = table.ready.get(model);
    if (ready?.length) return ready;
    const why = table.declared.get(model);
    if (why === undefined) return void fail(res, 404, `The model \`${model}\` does not exist`, "not_found_error", "model_not_found");
    return void fail(res, 503, `no ready replica of ${model}: ${why}`, "service_unavailable", "no_ready_replica", { "retry-after": "5" });
  }

  /** Sends the request to a ready replica, trying another one when the connection failed before the first byte. */
  async function dispatch(req: IncomingMessage, endpoints: Endpoint[], path: string, body: string, requestId: string, signal: Cancel): Promise<Sent> {
    const tried = new Set<string>();
    const headers = { "content-type": "application/json", accept: req.headers.accept ?? "application/json", "x-request-id": requestId };
    const session = req.headers["x-session-id"];
    let last = "no replica could be reached";
    for (let attempt = 0; attempt < r.maxAttempts; attempt++) {
      const ep = r.balancer.pick(endpoints, tried, typeof session === "string" ? session : undefined);
      if (!ep) break;
      if (attempt > 0) r.metrics.retries.inc();
      const done = r.balancer.begin(ep.url);
      try {
        return { ep, done, res: await r.upstream.send(ep.url, path, body, headers, signal) };
      } catch (e) {
        done();
        const kind = failureKind(e);
        r.metrics.upstreamErrors.inc({ model: ep.model, kind });
        if (signal.aborted) return { aborted: true };
        if (!retriable(kind)) return { failed: kind, message: `replica ${ep.replicaId} failed: ${kind.replace(/_/g, " ")}` };
        r.balancer.quarantine(ep.url);
        tried.add(ep.url);
        last = `replica ${ep.replicaId} at ${ep.url}: ${kind}`;
      }
    }
    return { failed: "unreachable", message: `no replica of this model could be reached (last: ${last})` };
  }

  /** Streams the engine's response to the client through the usage tap; resolves with the status it ended with. */
  async function relay(res: ServerResponse, model: string, up: UpstreamResponse, tap: Tap, sse: boolean, signal: Cancel): Promise<number> {
    const headers: Record<string, string> = {};
    for (const h of PASS_HEADERS) {
      const v = up.headers[h];
      if (typeof v === "string") headers[h] = v;
    }
    if (sse) Object.assign(headers, { "cache-control": "no-cache", "x-accel-buffering": "no" });
    // a JSON body passes through byte for byte, so its length holds; an event stream may lose the usage event
    else if (typeof up.headers["content-length"] === "string") headers["content-length"] = up.headers["content-length"];
    res.writeHead(up.status, headers);
    try {
      for await (const chunk of up.body) {
        const bytes = tap.chunk(chunk);
        if (bytes.length && !res.write(bytes) && !res.destroyed) await new Promise((ok) => res.once("drain", ok).once("close", ok));
      }
      const rest = tap.end().rest;
      res.end(rest.length ? rest : undefined);
      return up.status;
    } catch (e) {
      const kind = signal.aborted ? "aborted" : failureKind(e);
      r.metrics.upstreamErrors.inc({ model, kind });
      if (signal.aborted) return 499;
      if (sse) {
        // after the first byte nothing is retried: the stream ends with an error event the OpenAI SDKs raise
        res.end(`data: ${JSON.stringify(openAiError(`the replica failed mid-stream (${kind.replace(/_/g, " ")})`, "server_error", "upstream_error"))}\n\n`);
      } else res.destroy();
      return 502;
    }
  }

  /** One POST endpoint: parse, pick, forward, relay. */
  async function forward(req: IncomingMessage, res: ServerResponse, path: string, key: ApiKeyInfo, requestId: string, start: number) {
    const text = await readBody(req, res, r.maxRequestBytes);
    if (text === undefined) return;
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(text);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      body = parsed as Record<string, unknown>;
    } catch {
      return fail(res, 400, "the request body must be a JSON object", "invalid_request_error", "invalid_json");
    }
    const model = body.model;
    if (typeof model !== "string" || !model) return fail(res, 400, "you must provide a model parameter", "invalid_request_error", "missing_model");
    if (!allowed(key, model)) return fail(res, 403, `API key ${key.name} may not use model ${model}`, "permission_error", "model_not_allowed");
    const endpoints = await endpointsFor(res, model);
    if (!endpoints) return;
    const admitted = r.limiter.admit(key, o.now());
    if (!admitted.ok) {
      r.metrics.requests.inc({ model, code: "429" });
      return fail(res, 429, `rate limit of API key ${key.name} reached (${admitted.limit} per minute)`, "rate_limit_error", "rate_limit_exceeded", { "retry-after": String(admitted.retryAfterS) });
    }
    const streaming = body.stream === true;
    const options = (body.stream_options ?? {}) as Record<string, unknown>;
    const injected = streaming && STREAMS_USAGE.has(path) && options.include_usage !== true;
    const upstreamBody = injected ? JSON.stringify({ ...body, stream_options: { ...options, include_usage: true } }) : text;

    const abort = new Abort();
    // the client went away before its response was complete: stop the engine's work too
    res.once("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    r.metrics.inflight.inc({ model });
    const sent = await dispatch(req, endpoints, path, upstreamBody, requestId, abort);
    if (!("res" in sent)) {
      r.metrics.inflight.dec({ model });
      const status = "aborted" in sent ? 499 : sent.failed === "first_byte_timeout" ? 504 : 502;
      r.metrics.requests.inc({ model, code: String(status) });
      if ("aborted" in sent) return void res.destroy();
      return fail(res, status as 502 | 504, sent.message, "server_error", sent.failed === "first_byte_timeout" ? "upstream_timeout" : "upstream_unavailable");
    }
    r.metrics.firstByte.observe({ model }, (performance.now() - start) / 1000);
    const sse = String(sent.res.headers["content-type"] ?? "").includes("text/event-stream");
    const tap = sse ? sseTap(injected) : jsonTap();
    let status: number;
    try {
      status = await relay(res, model, sent.res, tap, sse, abort);
    } finally {
      sent.done();
      sent.res.body.destroy();
      r.metrics.inflight.dec({ model });
    }
    r.metrics.requests.inc({ model, code: String(status) });
    r.metrics.duration.observe({ model }, (performance.now() - start) / 1000);
    const usage = tap.end().usage;
    if (usage) {
      const now = o.now();
      r.usage.record(key.name, model, usage, now);
      r.limiter.spend(key, usage.promptTokens + usage.completionTokens, now);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const start = performance.now();
    const requestId = requestIdOf(req.headers["x-request-id"]);
    res.setHeader("x-request-id", requestId);
    const key = await authenticate(req, res);
    if (!key) return void req.resume();
    const path = (req.url ?? "/").split("?")[0]!;
    if (req.method === "POST" && POSTS.has(path)) return forward(req, res, path, key, requestId, start);
    req.resume();
    if (path === "/v1/models" && (req.method === "GET" || req.method === "HEAD")) {
      const table = await r.table.get();
      const created = Math.floor(table.readAt / 1000);
      const data = [...table.ready.keys()].filter((m) => allowed(key, m)).sort().map((id) => ({ id, object: "model", created, owned_by: "llmgw" }));
      const body = JSON.stringify({ object: "list", data });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      return void res.end(req.method === "HEAD" ? undefined : body);
    }
    fail(res, 404, `no such endpoint: ${req.method} ${path}`, "not_found_error", "unknown_endpoint");
  }

  return (req, res) => {
    handle(req, res).catch((e: unknown) => {
      o.log.error("router request failed", { error: String(e), path: req.url });
      if (res.headersSent) res.destroy();
      else fail(res, 502, "the router could not serve this request", "server_error", "router_error");
    });
  };
}
