// The router's decisions for one request, apart from how it travels (node:http on Node in handler.ts, fetch on Workers
// in fetch-handler.ts): the API key, the body's model and where it may go, and the call to a ready replica with a retry
// on another one while nothing reached the engine. No Node imports: both entries bundle it.
import { type OpenAiErrorType, openAiError } from "./errors.js";
import { type Cancel, failureKind, requestWritten, retriable, type UpstreamResponse } from "./failures.js";
import type { Slot } from "./fair-queue.js";
import { prefixPick } from "./prefix.js";
import { routingOf } from "./routing.js";
import type { ApiKeyInfo, Endpoint, EndpointTable, KeyStore, PrefixPick, RouterDeps } from "./types.js";

export const POSTS = new Set(["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses"]);
const STREAMS_USAGE = new Set(["/v1/chat/completions", "/v1/completions"]);
/** Engine response headers the client gets. */
export const PASS_HEADERS = ["content-type", "openai-model", "openai-processing-ms"];

/** True for the paths the router answers (everything else goes to the control API). */
export const isRouterPath = (url: string | undefined) =>
  !!url && (url.startsWith("/v1/") || url === "/v1" || url.startsWith("/v1?"));

export type RefusalStatus = 400 | 401 | 403 | 404 | 413 | 429 | 502 | 503 | 504;

/** Why a request is answered with an error instead of a replica's response (in OpenAI's error shape). */
export type Refusal = {
  refused: true;
  status: RefusalStatus;
  message: string;
  type: OpenAiErrorType;
  code: string;
  headers?: Record<string, string>;
  /** The routed model it was for, when it is one the router serves (counted in its recent usage). */
  model?: string;
};

/** A refusal. */
export const refuse = (
  status: RefusalStatus,
  message: string,
  type: OpenAiErrorType,
  code: string,
  headers?: Record<string, string>,
): Refusal => ({
  refused: true,
  status,
  message,
  type,
  code,
  headers,
});

/** The 413 of a body larger than `max` bytes. */
export const tooLarge = (max: number) =>
  refuse(413, `request body larger than ${max} bytes`, "invalid_request_error", "request_too_large", {
    connection: "close",
  });

const allowed = (key: ApiKeyInfo, model: string) => !key.models || key.models.includes(model);

/** The API key an `Authorization` header presents: known and not expired, or why not. */
export async function authenticate(
  r: { keys: KeyStore },
  authorization: string | null | undefined,
  now: number,
): Promise<ApiKeyInfo | Refusal> {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  if (!m)
    return refuse(
      401,
      "missing API key: send `Authorization: Bearer llmgw_key_…`",
      "authentication_error",
      "missing_api_key",
    );
  let key: ApiKeyInfo | undefined;
  try {
    key = await r.keys.identify(m[1]!);
  } catch {
    return refuse(
      503,
      "cannot check the API key now: the database is unreachable",
      "service_unavailable",
      "keys_unavailable",
      { "retry-after": "5" },
    );
  }
  if (!key) return refuse(401, "invalid API key", "authentication_error", "invalid_api_key");
  if (key.expiresAt !== undefined && key.expiresAt <= now)
    return refuse(401, `API key ${key.name} has expired`, "authentication_error", "expired_api_key");
  return key;
}

/** What goes to a replica: the model, its ready endpoints and the body to send. */
export type Routed = {
  model: string;
  endpoints: Endpoint[];
  body: string;
  injected: boolean;
  /** The prompt's prefix key, when the model routes by prefix. */
  prefix?: PrefixPick;
};

/** Reads a POST body: its model, whether the key may use it and has budget left, and where it can go. */
export async function route(
  r: RouterDeps,
  key: ApiKeyInfo,
  path: string,
  text: string,
  now: number,
): Promise<Routed | Refusal> {
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    body = parsed as Record<string, unknown>;
  } catch {
    return refuse(400, "the request body must be a JSON object", "invalid_request_error", "invalid_json");
  }
  const model = body.model;
  if (typeof model !== "string" || !model)
    return refuse(400, "you must provide a model parameter", "invalid_request_error", "missing_model");
  if (!allowed(key, model))
    return refuse(403, `API key ${key.name} may not use model ${model}`, "permission_error", "model_not_allowed");
  const table = await r.table.get();
  const endpoints = table.ready.get(model);
  if (!endpoints?.length) {
    const why = table.declared.get(model);
    if (why === undefined)
      return refuse(404, `The model \`${model}\` does not exist`, "not_found_error", "model_not_found");
    return {
      ...refuse(503, `no ready replica of ${model}: ${why}`, "service_unavailable", "no_ready_replica", {
        "retry-after": "5",
      }),
      model,
    };
  }
  const admitted = r.limiter.admit(key, now);
  if (!admitted.ok) {
    r.metrics.requests.inc({ model, code: "429" });
    return {
      ...refuse(
        429,
        `rate limit of API key ${key.name} reached (${admitted.limit} per minute)`,
        "rate_limit_error",
        "rate_limit_exceeded",
        { "retry-after": String(admitted.retryAfterS) },
      ),
      model,
    };
  }
  // the router counts usage: a stream is asked for its usage event (and the tap drops it when the client did not ask)
  const options = (body.stream_options ?? {}) as Record<string, unknown>;
  const injected = body.stream === true && STREAMS_USAGE.has(path) && options.include_usage !== true;
  const routing = table.routing?.get(model) ?? routingOf({});
  const prefix = routing.policy === "prefix" ? prefixPick(path, body, routing) : undefined;
  return {
    model,
    endpoints,
    body: injected ? JSON.stringify({ ...body, stream_options: { ...options, include_usage: true } }) : text,
    injected,
    ...(prefix ? { prefix } : {}),
  };
}

export type Sent =
  | { ep: Endpoint; done: () => void; started: () => void; res: UpstreamResponse }
  | { aborted: true }
  | { failed: string; message: string };

/**
 * A slot for the request in the model's fair queue (fair-queue.ts): at once while the model and the key have room,
 * else after waiting its key's turn; the 429 when the deadline came first; `aborted` when the client went away.
 */
export async function admit(
  r: RouterDeps,
  key: ApiKeyInfo,
  routed: Routed,
  signal: Cancel,
): Promise<Slot | Refusal | { aborted: true }> {
  const { model } = routed;
  const capacity = routed.endpoints.length * r.maxInflightPerReplica;
  const ask = { key: key.id ?? key.name, limit: key.maxConcurrent, model, capacity };
  const slot = r.fairQueue.tryAcquire(ask);
  if (slot) return slot;
  r.metrics.queueDepth.inc({ model });
  const w = await r.fairQueue.wait(ask, signal);
  r.metrics.queueDepth.dec({ model });
  r.metrics.queueWait.observe({ model }, w.waitedMs / 1000);
  if ("slot" in w) return w.slot;
  r.metrics.requests.inc({ model, code: w.refused === "aborted" ? "499" : "429" });
  if (w.refused === "aborted") return { aborted: true };
  const s = Math.round(w.waitedMs / 1000);
  const message =
    w.by === "key"
      ? `API key ${key.name} has ${key.maxConcurrent} requests in flight (its maxConcurrent); this one waited ${s} s for one to end`
      : `${model} is at capacity on this router instance (${capacity} requests in flight); this one waited ${s} s for a slot`;
  return { ...refuse(429, message, "rate_limit_error", "queue_timeout", { "retry-after": "1" }), model };
}

/**
 * Sends the request to a ready replica, trying another one when the connection failed before the first byte. It owns
 * `slot` (from `admit`): released here unless a response came, else by the `done` it returns (with the replica count);
 * its `started` is for the response's first byte.
 */
export async function dispatch(
  r: RouterDeps,
  routed: Routed,
  path: string,
  headers: Record<string, string>,
  session: string | undefined,
  signal: Cancel,
  slot: Slot,
): Promise<Sent> {
  let handedOver = false;
  try {
    const tried = new Set<string>();
    let last = "no replica could be reached";
    for (let attempt = 0; attempt < r.maxAttempts; attempt++) {
      const ep = r.balancer.pick(routed.endpoints, tried, session, routed.prefix);
      if (!ep) break;
      if (attempt > 0) r.metrics.retries.inc();
      const ended = r.balancer.begin(ep.url, routed.prefix?.own);
      try {
        const res = await r.upstream.send(ep.url, path, routed.body, headers, signal);
        handedOver = true;
        const done = () => {
          ended();
          slot.release();
        };
        return { ep, done, started: ended.started, res };
      } catch (e) {
        ended();
        const kind = failureKind(e);
        r.metrics.upstreamErrors.inc({ model: ep.model, kind });
        if (signal.aborted) return { aborted: true };
        if (!retriable(kind, requestWritten(e)))
          return { failed: kind, message: `replica ${ep.replicaId} failed: ${kind.replace(/_/g, " ")}` };
        r.balancer.quarantine(ep.url);
        tried.add(ep.url);
        last = `replica ${ep.replicaId} at ${ep.url}: ${kind}`;
      }
    }
    return { failed: "unreachable", message: `no replica of this model could be reached (last: ${last})` };
  } finally {
    if (!handedOver) slot.release();
  }
}

/** The refusal of a request that reached no replica (`aborted`: the client left, nothing to answer). */
export function notSent(sent: Exclude<Sent, { res: UpstreamResponse }>): Refusal | undefined {
  if ("aborted" in sent) return undefined;
  const timeout = sent.failed === "first_byte_timeout";
  return refuse(
    timeout ? 504 : 502,
    sent.message,
    "server_error",
    timeout ? "upstream_timeout" : "upstream_unavailable",
  );
}

/** The SSE event that ends a stream whose replica failed after the first byte (the OpenAI SDKs raise it). */
export const midStreamError = (kind: string) =>
  `data: ${JSON.stringify(openAiError(`the replica failed mid-stream (${kind.replace(/_/g, " ")})`, "server_error", "upstream_error"))}\n\n`;

/** The body of GET /v1/models: the models with a ready replica that the key may use. */
export function modelList(table: EndpointTable, key: ApiKeyInfo): string {
  const created = Math.floor(table.readAt / 1000);
  const data = [...table.ready.keys()]
    .filter((m) => allowed(key, m))
    .sort()
    .map((id) => ({ id, object: "model", created, owned_by: "llmgw" }));
  return JSON.stringify({ object: "list", data });
}

/** Records a finished response's usage against its key. */
export function recordUsage(
  r: RouterDeps,
  key: ApiKeyInfo,
  model: string,
  usage: { promptTokens: number; completionTokens: number } | undefined,
  now: number,
) {
  if (!usage) return;
  r.usage.record(key.name, model, usage, now);
  r.metrics.tokens.inc({ model, kind: "prompt" }, usage.promptTokens);
  r.metrics.tokens.inc({ model, kind: "completion" }, usage.completionTokens);
  r.limiter.spend(key, usage.promptTokens + usage.completionTokens, now);
}
