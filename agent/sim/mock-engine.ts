// A small OpenAI-compatible server that stands in for vLLM in tests, the demo and benchmarks (node:http, no framework).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import {
  type Counters,
  completionBody,
  embeddingsBody,
  errorBody,
  type Gen,
  generatedWords,
  type Kind,
  kindOf,
  type MetricsStyle,
  metricsOf,
  promptWords,
  streamEvents,
  wordCount,
} from "./mock-openai.js";
import { ncclInitLines } from "./nccl-lines.js";
import { createPrefixCache } from "./prefix-cache.js";

export type MockEngineOptions = {
  model: string;
  host?: string;
  port?: number;
  /** /health answers 503 for this long after listening. */
  loadMs?: number;
  /** Pace of generated tokens; 0 for no pacing. */
  tokensPerS?: number;
  /** KV cache of this replica, in tokens, for prefix caching (prefix-cache.ts); 0 or unset: none. */
  prefixCacheTokens?: number;
  /** Tokens a KV block holds (default 16, as vLLM's). */
  blockTokens?: number;
  /**
   * Prefill pace: the first token waits for each uncached prompt token ÷ this. Default 10,000 tokens/s (H100-class
   * prefill of a mid-size model) with a prefix cache, else 0: no prefill wait.
   */
  prefillTokensPerS?: number;
  /** The fixed part of the time to first token, before prefill (default 0). */
  ttftBaseMs?: number;
  /**
   * One prefill at a time (default true): a request's prefill starts when those that came before it to this replica
   * are done, as on an engine whose GPU the prefills share — its time to first token includes that wait. False: each
   * request prefills as if alone.
   */
  prefillQueue?: boolean;
  /** The N-th completion request calls `crash` (after the first chunk when streaming, before answering otherwise). */
  failAfter?: number;
  /** Called on the failing request (the CLI exits 1); the connection is dropped either way. */
  crash?: () => void;
  /** On stop, cut every request in flight at once (as an engine whose process ends), rather than finishing them. */
  abortOnStop?: boolean;
  /** Whose metric names GET /metrics uses (default vLLM's); `none` answers 404, as an engine started without them. */
  metrics?: MetricsStyle;
  /** The environment the engine was given, for GET /debug/env and NCCL's init lines (nccl-lines.ts). */
  env?: Record<string, string | undefined>;
  /**
   * Where NCCL's init lines go when `env` has NCCL_DEBUG=INFO, before /health says ready (default stdout: the agent
   * sends an engine's stdout to the shard's log, which it reads for the transport NCCL chose).
   */
  ncclLog?: (text: string) => void;
  now?: () => number;
};

export type MockEngine = { port: number; close(): Promise<void> };

const DRAIN_MS = 2_000;
const DEFAULT_TOKENS = 16;
const DEFAULT_PREFILL_TOKENS_PER_S = 10_000;
const ENV_PREFIXES = ["CUDA_", "NCCL_", "GLOO_", "GGML_", "LLMGW_"];
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/**
 * Starts the mock engine; it stops (draining in-flight requests for at most ~2 s) on close() or when `signal` aborts.
 */
export async function startMockEngine(opts: MockEngineOptions, signal?: AbortSignal): Promise<MockEngine> {
  const now = opts.now ?? Date.now;
  const c: Counters = { running: 0, prompt: 0, generation: 0, success: { stop: 0, length: 0 } };
  let readyAt = Infinity;
  let requests = 0;
  let iteration = 0;
  let draining = false;
  const cache = opts.prefixCacheTokens
    ? createPrefixCache({ capacityTokens: opts.prefixCacheTokens, blockTokens: opts.blockTokens })
    : undefined;
  const prefillRate = opts.prefillTokensPerS ?? (cache ? DEFAULT_PREFILL_TOKENS_PER_S : 0);
  const ttftBaseMs = opts.ttftBaseMs ?? 0;
  // x-mock-prefill-ms says the computed wait, so that tests and benchmarks can check it without timing anything
  const timesPrefill = cache !== undefined || prefillRate > 0 || ttftBaseMs > 0;
  const queues = opts.prefillQueue !== false;
  // when the prefills admitted so far are done (performance.now()), with one prefill at a time
  let prefillsDone = 0;
  /** The wait before `tokens` uncached prompt tokens are prefilled: behind the others, with a queue, then their own. */
  const prefillWait = (tokens: number) => {
    const own = prefillRate ? (tokens * 1000) / prefillRate : 0;
    if (!queues || !own) return own;
    const at = performance.now();
    prefillsDone = Math.max(at, prefillsDone) + own;
    return prefillsDone - at;
  };

  const send = (res: ServerResponse, status: number, body: unknown, type = "application/json", headers = {}) => {
    if (draining) res.shouldKeepAlive = false;
    res
      .writeHead(status, { "content-type": type, ...headers })
      .end(typeof body === "string" ? body : JSON.stringify(body));
  };
  const fail = (res: ServerResponse, status: number, message: string, code: string) =>
    send(res, status, errorBody(message, status >= 500 ? "server_error" : "invalid_request_error", code));

  async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
    const parts: Buffer[] = [];
    for await (const p of req) parts.push(p as Buffer);
    try {
      const v: unknown = JSON.parse(Buffer.concat(parts).toString("utf8"));
      return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }

  async function generate(res: ServerResponse, kind: Kind, body: Record<string, unknown>) {
    const max = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens;
    if (max != null && !(Number.isInteger(max) && (max as number) > 0))
      return fail(res, 400, "max_tokens must be a positive integer", "invalid_value");
    const input = kind === "chat" ? body.messages : kind === "text" ? body.prompt : body.input;
    if (input == null)
      return fail(
        res,
        400,
        `'${kind === "chat" ? "messages" : kind === "text" ? "prompt" : "input"}' is required`,
        "missing_required_parameter",
      );
    const stream = body.stream === true;
    if (stream && kind === "responses")
      return fail(res, 400, "the mock engine does not stream the Responses API", "unsupported_parameter");
    const crashes = ++requests === opts.failAfter;
    const crash = () => {
      opts.crash?.();
      res.destroy();
    };
    if (crashes && !stream) return crash();
    const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const n = (max as number | undefined) ?? DEFAULT_TOKENS;
    // the KV of every generated token but the last is computed, so the next turn of a conversation hits it too
    const looked = cache?.lookupAndInsert(promptWords(input), generatedWords(n - 1));
    const prompt = looked ? looked.queriedTokens : wordCount(input);
    const cached = looked?.cachedTokens;
    const prefillMs = ttftBaseMs + prefillWait(prompt - (cached ?? 0));
    const timing = timesPrefill ? { "x-mock-prefill-ms": String(Math.round(prefillMs * 1000) / 1000) } : {};
    const prefill = () => (draining || !prefillMs ? undefined : sleep(prefillMs));
    const g: Gen = {
      kind,
      model: opts.model,
      n,
      finish: max == null ? "stop" : "length",
      prompt,
      id: requests,
      created: Math.floor(now() / 1000),
      includeUsage,
      cached,
    };
    const gap = () => (draining || !opts.tokensPerS ? 0 : 1000 / opts.tokensPerS);
    c.running++;
    c.prompt += prompt;
    let closed = false;
    res.once("close", () => (closed = true));
    try {
      if (!stream) {
        await prefill();
        if (gap()) await sleep(gap() * g.n);
        c.generation += g.n;
        c.success[g.finish]++;
        return send(res, 200, completionBody(g), undefined, timing);
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...timing });
      await prefill();
      let first = true;
      for (const e of streamEvents(g)) {
        if (closed) return;
        if (e.token && !first && gap()) await sleep(gap());
        if (e.token) c.generation++;
        if (e.finish) c.success[e.finish]++;
        await new Promise<void>((ok) => res.write(`data: ${JSON.stringify(e.body)}\n\n`, () => ok()));
        if (first && crashes) return crash();
        first = false;
      }
      res.end("data: [DONE]\n\n");
    } finally {
      c.running--;
      if (draining) setImmediate(() => server.closeIdleConnections());
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? "/").split("?")[0];
    const loading = now() < readyAt;
    if (req.method === "GET") {
      if (path === "/health")
        return loading ? send(res, 503, "Loading model", "text/plain") : send(res, 200, "", "text/plain");
      if (path === "/metrics") {
        const style = opts.metrics ?? "vllm";
        if (style === "none") return fail(res, 404, "metrics are not enabled", "not_found");
        const m = metricsOf(style, opts.model, { ...c, prefix: cache?.stats() }, ++iteration);
        return send(res, 200, m.body, m.type);
      }
      if (path === "/v1/models")
        return send(res, 200, {
          object: "list",
          data: [{ id: opts.model, object: "model", created: Math.floor(readyAt / 1000), owned_by: "llmgw-mock" }],
        });
      if (path === "/debug/env") {
        const env = Object.entries(opts.env ?? {}).filter(
          ([k, v]) => v !== undefined && ENV_PREFIXES.some((p) => k.startsWith(p)),
        );
        return send(res, 200, Object.fromEntries(env.sort(([a], [b]) => a.localeCompare(b))));
      }
    }
    const kind = req.method === "POST" ? kindOf(path) : undefined;
    if (!kind) return fail(res, 404, `no route for ${req.method} ${path}`, "not_found");
    const body = await readJson(req);
    if (!body) return fail(res, 400, "the request body is not a JSON object", "invalid_json");
    if (loading) return fail(res, 503, "the model is still loading", "model_loading");
    if (body.model != null && body.model !== opts.model)
      return fail(res, 404, `The model \`${String(body.model)}\` does not exist.`, "model_not_found");
    if (kind !== "embeddings") return generate(res, kind, body);
    const out = embeddingsBody(opts.model, body.input, body.encoding_format === "base64");
    if (!out)
      return fail(
        res,
        400,
        "'input' must be a string, an array of strings or an array of token arrays",
        "invalid_value",
      );
    c.prompt += out.usage.prompt_tokens;
    return send(res, 200, out);
  }

  const server = createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      if (!res.headersSent) fail(res, 500, e instanceof Error ? e.message : String(e), "internal_error");
      else res.destroy();
    });
  });
  await new Promise<void>((ok, bad) => {
    server.once("error", bad);
    server.listen(opts.port ?? 0, opts.host ?? "0.0.0.0", () => {
      server.off("error", bad);
      ok();
    });
  });
  const nccl = ncclInitLines(opts.env ?? {}, hostname(), process.pid);
  if (nccl.length) (opts.ncclLog ?? ((t) => process.stdout.write(t)))(`${nccl.join("\n")}\n`);
  readyAt = now() + (opts.loadMs ?? 0);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((done) => {
      draining = true;
      const force = setTimeout(() => server.closeAllConnections(), opts.abortOnStop ? 0 : DRAIN_MS);
      server.close(() => {
        clearTimeout(force);
        done();
      });
      server.closeIdleConnections();
    }));
  signal?.addEventListener("abort", () => void close(), { once: true });
  return { port: (server.address() as AddressInfo).port, close };
}
