// The mock engine's replies in OpenAI's exact shapes, and its vLLM-style metrics: pure functions, no I/O.
import { fnv1a32 } from "../../shared/hash.js";

export type Kind = "chat" | "text" | "responses";
export type Finish = "stop" | "length";
export type Counters = {
  running: number;
  prompt: number;
  generation: number;
  success: Record<Finish, number>;
  /** Prompt tokens looked up in the prefix cache and found there, when the engine has one. */
  prefix?: { queries: number; hits: number };
};

/** One generation: `n` tokens `token0 token1 …` for a prompt of `prompt` words. */
export type Gen = {
  kind: Kind;
  model: string;
  n: number;
  finish: Finish;
  prompt: number;
  id: number;
  created: number;
  includeUsage: boolean;
  /** Prompt tokens found in the prefix cache; undefined when the engine has none. */
  cached?: number;
};

/**
 * One server-sent event of a stream: its JSON body, whether it carries a generated token, and the finish it reports.
 */
export type StreamEvent = { body: unknown; token: boolean; finish?: Finish };

/** OpenAI's error body. */
export function errorBody(message: string, type: string, code: string) {
  return { error: { message, type, code } };
}

/** Which generation endpoint a POST path is, if any. */
export function kindOf(path: string | undefined): Kind | "embeddings" | undefined {
  const kinds: Record<string, Kind | "embeddings"> = {
    "/v1/chat/completions": "chat",
    "/v1/completions": "text",
    "/v1/responses": "responses",
    "/v1/embeddings": "embeddings",
  };
  return path ? kinds[path] : undefined;
}

/** Counts prompt "tokens" as whitespace-separated words: strings, token-id arrays, chat messages and their parts. */
export function wordCount(v: unknown): number {
  if (typeof v === "string") return v.split(/\s+/).filter(Boolean).length;
  if (typeof v === "number") return 1;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + wordCount(x), 0);
  if (v && typeof v === "object")
    return wordCount((v as { content?: unknown; text?: unknown }).content ?? (v as { text?: unknown }).text);
  return 0;
}

/** The prompt "tokens" themselves, in order: the words wordCount counts (a token id is its decimal digits). */
export function promptWords(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") {
    for (const w of v.match(/\S+/g) ?? []) out.push(w);
  } else if (typeof v === "number") out.push(String(v));
  else if (Array.isArray(v)) for (const x of v) promptWords(x, out);
  else if (v && typeof v === "object")
    promptWords((v as { content?: unknown; text?: unknown }).content ?? (v as { text?: unknown }).text, out);
  return out;
}

/** The words of a generation of `n` tokens, as a prompt that quotes it back would count them. */
export const generatedWords = (n: number): string[] => Array.from({ length: n }, (_, i) => `token${i}`);

const piece = (i: number) => (i ? ` token${i}` : "token0");
// vLLM (with --enable-prompt-tokens-details) reports prompt_tokens_details only when some prompt tokens hit the cache
const usage = (g: Gen) => ({
  prompt_tokens: g.prompt,
  completion_tokens: g.n,
  total_tokens: g.prompt + g.n,
  ...(g.cached ? { prompt_tokens_details: { cached_tokens: g.cached } } : {}),
});
const idOf = (g: Gen) => `${g.kind === "chat" ? "chatcmpl" : g.kind === "text" ? "cmpl" : "resp"}-mock${g.id}`;

/** The whole reply of a non-streaming request. */
export function completionBody(g: Gen) {
  const text = Array.from({ length: g.n }, (_, i) => piece(i)).join("");
  const head = {
    id: idOf(g),
    object: g.kind === "chat" ? "chat.completion" : "text_completion",
    created: g.created,
    model: g.model,
  };
  if (g.kind === "chat") {
    return {
      ...head,
      choices: [{ index: 0, message: { role: "assistant", content: text }, logprobs: null, finish_reason: g.finish }],
      usage: usage(g),
    };
  }
  if (g.kind === "text")
    return { ...head, choices: [{ index: 0, text, logprobs: null, finish_reason: g.finish }], usage: usage(g) };
  return {
    id: idOf(g),
    object: "response",
    created_at: g.created,
    status: g.finish === "stop" ? "completed" : "incomplete",
    incomplete_details: g.finish === "stop" ? null : { reason: "max_output_tokens" },
    model: g.model,
    output: [
      {
        type: "message",
        id: `msg-mock${g.id}`,
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
    usage: {
      input_tokens: g.prompt,
      // vLLM's Responses API always reports input_tokens_details, as OpenAI's does
      ...(g.cached === undefined ? {} : { input_tokens_details: { cached_tokens: g.cached } }),
      output_tokens: g.n,
      total_tokens: g.prompt + g.n,
    },
  };
}

/** The chunks of a streaming chat or text completion, lazily (a long generation is never held in memory). */
export function* streamEvents(g: Gen): Generator<StreamEvent> {
  const chat = g.kind === "chat";
  const chunk = (choices: unknown[], u: unknown = null) => ({
    id: idOf(g),
    object: chat ? "chat.completion.chunk" : "text_completion",
    created: g.created,
    model: g.model,
    choices,
    ...(g.includeUsage ? { usage: u } : {}),
  });
  const choice = (content: string | undefined, finish: Finish | null, role = false) =>
    chat
      ? {
          index: 0,
          delta: content === undefined ? {} : role ? { role: "assistant", content } : { content },
          logprobs: null,
          finish_reason: finish,
        }
      : { index: 0, text: content ?? "", logprobs: null, finish_reason: finish };
  if (chat) yield { body: chunk([choice("", null, true)]), token: false };
  for (let i = 0; i < g.n; i++) yield { body: chunk([choice(piece(i), null)]), token: true };
  yield { body: chunk([choice(undefined, g.finish)]), token: false, finish: g.finish };
  if (g.includeUsage) yield { body: chunk([], usage(g)), token: false };
}

/** A small deterministic unit vector for one input (FNV-1a seed, xorshift). */
export function embedding(input: unknown, dims = 8): number[] {
  let h = fnv1a32(JSON.stringify(input));
  const v: number[] = [];
  for (let i = 0; i < dims; i++) {
    h ^= h << 13;
    h ^= h >>> 17;
    h ^= h << 5;
    h >>>= 0;
    v.push(h / 0xffffffff - 0.5);
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => Math.fround(x / norm));
}

/** The embeddings reply, or undefined when `input` is not a string, strings, token ids or token-id arrays. */
export function embeddingsBody(model: string, input: unknown, base64: boolean) {
  const isTokens = (x: unknown) => Array.isArray(x) && x.length > 0 && x.every((t) => Number.isInteger(t));
  const inputs = typeof input === "string" || isTokens(input) ? [input] : input;
  if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((x) => typeof x === "string" || isTokens(x)))
    return undefined;
  const data = inputs.map((x, index) => {
    const v = embedding(x);
    return {
      object: "embedding",
      index,
      embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v,
    };
  });
  const words = wordCount(inputs);
  return { object: "list", data, model, usage: { prompt_tokens: words, total_tokens: words } };
}

/** Prometheus text with vLLM's metric names (HELP and TYPE as vLLM's prometheus_client prints them). */
export function metricsText(model: string, c: Counters): string {
  const m = `model_name="${model.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
  const one = (name: string, type: string, help: string, lines: string[]) => [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} ${type}`,
    ...lines,
  ];
  return `${[
    ...one("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", [
      `vllm:num_requests_running{${m}} ${c.running}`,
    ]),
    ...one("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", [
      `vllm:num_requests_waiting{${m}} 0`,
    ]),
    ...one("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", [
      `vllm:prompt_tokens_total{${m}} ${c.prompt}`,
    ]),
    ...one("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", [
      `vllm:generation_tokens_total{${m}} ${c.generation}`,
    ]),
    ...one("vllm:request_success_total", "counter", "Count of successfully processed requests.", [
      `vllm:request_success_total{finished_reason="stop",${m}} ${c.success.stop}`,
      `vllm:request_success_total{finished_reason="length",${m}} ${c.success.length}`,
    ]),
    // vLLM v1's counters (vllm/v1/metrics/loggers.py), in tokens; prometheus_client adds the _total
    ...(c.prefix
      ? [
          ...one(
            "vllm:prefix_cache_queries_total",
            "counter",
            "Prefix cache queries, in terms of number of queried tokens.",
            [`vllm:prefix_cache_queries_total{${m}} ${c.prefix.queries}`],
          ),
          ...one("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", [
            `vllm:prefix_cache_hits_total{${m}} ${c.prefix.hits}`,
          ]),
        ]
      : []),
  ].join("\n")}\n`;
}

/** Whose metrics the mock engine exposes on GET /metrics, as that engine names them; `none`: no /metrics (404). */
export const METRICS_STYLES = ["vllm", "sglang", "llamacpp", "trtllm", "none"] as const;
export type MetricsStyle = (typeof METRICS_STYLES)[number];

/**
 * GET /metrics of `style`: vLLM's Prometheus text (metricsText), SGLang's `sglang:num_running_reqs` /
 * `sglang:num_queue_reqs`, llama.cpp's `llamacpp:requests_processing` / `llamacpp:requests_deferred`, or
 * TensorRT-LLM's JSON iteration stats (an array of the iterations since the last call: empty when none ran).
 */
export function metricsOf(
  style: Exclude<MetricsStyle, "none">,
  model: string,
  c: Counters,
  iteration: number,
): { type: string; body: string } {
  const prom = "text/plain; version=0.0.4; charset=utf-8";
  const gauge = (name: string, help: string, v: number, labels = "") =>
    `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name}${labels} ${v}\n`;
  if (style === "vllm") return { type: prom, body: metricsText(model, c) };
  if (style === "sglang") {
    const l = `{model_name="${model.replace(/["\\\n]/g, "_")}"}`;
    return {
      type: prom,
      body:
        gauge("sglang:num_running_reqs", "The number of running requests.", c.running, l) +
        gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", 0, l),
    };
  }
  if (style === "llamacpp")
    return {
      type: prom,
      body:
        gauge("llamacpp:requests_processing", "Number of requests processing.", c.running) +
        gauge("llamacpp:requests_deferred", "Number of requests deferred.", 0),
    };
  const stats = c.running
    ? [{ iter: iteration, timestamp: new Date().toISOString(), numActiveRequests: c.running, numQueuedRequests: 0 }]
    : [];
  return { type: "application/json", body: JSON.stringify(stats) };
}
