// The OpenAI-compatible endpoints on a bare node:http handler: /v1/models and the POST endpoints, routed by the body's
// `model` to a ready replica's rank-0 endpoint. Bodies pass through unchanged (except `stream_options.include_usage`,
// asked for so usage can be counted); responses stream through as they arrive, with backpressure.
// This is the hot path of every inference request, so it works on Node's own request and response objects: no WHATWG
// Request/Response or web streams per request (api/http-server.ts puts it in front of the Hono app). What to answer
// is decided in request.ts, which the Worker's fetch-handler.ts shares.
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Log } from "../log.js";
import { requestIdOf } from "../request-id.js";
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
  recordUsage,
  refuse,
  route,
  tooLarge,
} from "./request.js";
import type { ApiKeyInfo, RouterDeps } from "./types.js";
import { jsonTap, sseTap, type Tap } from "./usage-tap.js";

export type RouterHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Sends an OpenAI-style error (unless the response has already begun). */
function fail(res: ServerResponse, r: Refusal) {
  if (res.headersSent) return;
  const body = JSON.stringify(openAiError(r.message, r.type, r.code));
  res.writeHead(r.status, {
    ...r.headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** Resolves when `res` can take more (drained) or is gone (closed), leaving neither listener behind. */
function writable(res: ServerResponse): Promise<void> {
  return new Promise((ok) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      ok();
    };
    res.on("drain", done).on("close", done);
  });
}

/** Answers 413 for a body larger than `max` bytes and lets the rest of it drain. */
function refuseTooLarge(req: IncomingMessage, res: ServerResponse, max: number): undefined {
  fail(res, tooLarge(max));
  req.resume();
  return undefined;
}

/** The request body as text; undefined when it is larger than `max` bytes (after answering 413) or the client left. */
function readBody(req: IncomingMessage, res: ServerResponse, max: number): Promise<string | undefined> {
  if (Number(req.headers["content-length"] ?? 0) > max) return Promise.resolve(refuseTooLarge(req, res, max));
  return new Promise((ok, ko) => {
    const parts: Buffer[] = [];
    let size = 0;
    // inline listeners: no per-request named closures on the hot path
    req
      .on("data", (b: Buffer) => {
        if (size > max) return;
        size += b.length;
        if (size <= max) parts.push(b);
        else ok(refuseTooLarge(req, res, max));
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

/** Creates the handler of one API instance over its router state. */
export function createRouterHandler(r: RouterDeps, o: { now: () => number; log: Log }): RouterHandler {
  /** Streams the engine's response to the client through the usage tap; resolves with the status it ended with. */
  async function relay(
    res: ServerResponse,
    model: string,
    up: UpstreamResponse,
    tap: Tap,
    sse: boolean,
    signal: Cancel,
    first: { at?: number },
    started: () => void,
  ): Promise<number> {
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
        if (first.at === undefined) {
          first.at = performance.now();
          started();
        }
        const bytes = tap.chunk(chunk);
        if (bytes.length && !res.write(bytes) && !res.destroyed) await writable(res);
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
        res.end(midStreamError(kind));
      } else res.destroy();
      return 502;
    }
  }

  /** One POST endpoint: parse, pick, forward, relay. */
  async function forward(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    key: ApiKeyInfo,
    requestId: string,
    start: number,
  ) {
    const text = await readBody(req, res, r.maxRequestBytes);
    if (text === undefined) return;
    const refused = (refusal: Refusal) => {
      if (refusal.model) r.usage.observe(key.name, refusal.model, { status: refusal.status }, o.now());
      if (refusal.status >= 500)
        o.log.warn(`router: ${refusal.message}`, { requestId, model: refusal.model, status: refusal.status });
      fail(res, refusal);
    };
    const routed = await route(r, key, path, text, o.now());
    if ("refused" in routed) return refused(routed);
    const { model } = routed;
    const abort = new Abort();
    // the client went away before its response was complete: it leaves the queue, and the engine stops its work
    res.once("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    const slot = await admit(r, key, routed, abort);
    if ("refused" in slot) return refused(slot);
    if ("aborted" in slot) {
      r.usage.observe(key.name, model, { status: 499 }, o.now());
      return void res.destroy();
    }
    r.metrics.inflight.inc({ model });
    const headers = {
      "content-type": "application/json",
      accept: req.headers.accept ?? "application/json",
      "x-request-id": requestId,
    };
    const session = req.headers["x-session-id"];
    const sent = await dispatch(
      r,
      routed,
      path,
      headers,
      typeof session === "string" ? session : undefined,
      abort,
      slot,
    );
    if (!("res" in sent)) {
      r.metrics.inflight.dec({ model });
      const refusal = notSent(sent);
      r.metrics.requests.inc({ model, code: String(refusal?.status ?? 499) });
      if (refusal) return refused({ ...refusal, model });
      r.usage.observe(key.name, model, { status: 499 }, o.now());
      return void res.destroy();
    }
    r.metrics.firstByte.observe({ model }, (performance.now() - start) / 1000);
    const sse = String(sent.res.headers["content-type"] ?? "").includes("text/event-stream");
    const tap = sse ? sseTap(routed.injected) : jsonTap();
    let status: number;
    const first: { at?: number } = {};
    try {
      status = await relay(res, model, sent.res, tap, sse, abort, first, sent.started);
    } finally {
      sent.done();
      sent.res.body.destroy();
      r.metrics.inflight.dec({ model });
    }
    r.metrics.requests.inc({ model, code: String(status) });
    r.metrics.duration.observe({ model }, (performance.now() - start) / 1000);
    const usage = tap.end().usage;
    recordUsage(r, key, model, usage, o.now());
    const ttftMs = first.at === undefined ? undefined : first.at - start;
    r.usage.observe(key.name, model, { status, ttftMs, usage }, o.now());
    o.log.debug?.("routed", {
      requestId,
      model,
      replicaId: sent.ep.replicaId,
      apiKey: key.name,
      status,
      ms: Math.round(performance.now() - start),
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const start = performance.now();
    const requestId = requestIdOf(req.headers["x-request-id"]);
    res.setHeader("x-request-id", requestId);
    const key = await authenticate(r, req.headers.authorization, o.now());
    if ("refused" in key) {
      fail(res, key);
      return void req.resume();
    }
    const path = (req.url ?? "/").split("?")[0]!;
    if (req.method === "POST" && POSTS.has(path)) return forward(req, res, path, key, requestId, start);
    req.resume();
    if (path === "/v1/models" && (req.method === "GET" || req.method === "HEAD")) {
      const body = modelList(await r.table.get(), key);
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      return void res.end(req.method === "HEAD" ? undefined : body);
    }
    fail(res, refuse(404, `no such endpoint: ${req.method} ${path}`, "not_found_error", "unknown_endpoint"));
  }

  return (req, res) => {
    handle(req, res).catch((e: unknown) => {
      o.log.error("router request failed", { error: String(e), path: req.url });
      if (res.headersSent) res.destroy();
      else fail(res, refuse(502, "the router could not serve this request", "server_error", "router_error"));
    });
  };
}
