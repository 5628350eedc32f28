// One replay of a request trace for bench/routing.ts: each request sent at its timestamp (divided by the speed-up) to
// one of the targets, streamed, its time to first token and the engine's usage (prompt and cached tokens) recorded.

import { readFileSync } from "node:fs";
import { createPrefixCache } from "../agent/sim/prefix-cache.js";
import { messagesOf, promptOf, readTrace, type TraceEntry, type Turn } from "./trace.js";

export type Shot = { ttftMs: number; prompt: number; cached: number; output: number; error?: string };
export type ReplayResult = { shots: Shot[]; seconds: number };

/** The first `limit` entries of the trace in `file`; a file that cannot be read or parsed ends `bench` with its reason. */
export function traceOrExit(bench: string, file: string, limit: number): TraceEntry[] {
  try {
    return readTrace(readFileSync(file, "utf8"), { limit });
  } catch (e) {
    console.error(`${bench}: ${file}: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(2);
  }
}

/** How a replay sends each request: as a chat client (messages) or as a completions client (one prompt string). */
export type ReplayApi = "chat" | "completions";
export const REPLAY_PATHS: Record<ReplayApi, string> = { chat: "/v1/chat/completions", completions: "/v1/completions" };

/** The request body of entry `e` (its `turns`), after `namespace`: chat messages or one completion prompt. */
export function replayBody(api: ReplayApi, namespace: string, e: TraceEntry, turns: readonly Turn[]) {
  return api === "chat"
    ? { messages: namespaced(namespace, messagesOf(e, turns)) }
    : { prompt: `${namespace} ${promptOf(e)}` };
}

/** The first generated text's arrival and the final usage of one streamed chat or text completion. */
async function send(url: string, path: string, key: string, body: object): Promise<Shot> {
  const began = performance.now();
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
  let ttftMs = -1;
  let usage: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
  } = {};
  let buffered = "";
  const decoder = new TextDecoder();
  const reader = res.body.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    const chunk = next.value;
    buffered += decoder.decode(chunk, { stream: true });
    let end = buffered.indexOf("\n\n");
    while (end >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf("\n\n");
      const data = event.startsWith("data: ") ? event.slice(6) : "";
      if (!data || data === "[DONE]") continue;
      const parsed = JSON.parse(data) as {
        choices?: { delta?: { content?: string }; text?: string }[];
        usage?: typeof usage;
      };
      const first = parsed.choices?.[0];
      if (ttftMs < 0 && (first?.delta?.content || first?.text)) ttftMs = performance.now() - began;
      if (parsed.usage) usage = parsed.usage;
    }
  }
  return {
    ttftMs,
    prompt: usage.prompt_tokens ?? 0,
    cached: usage.prompt_tokens_details?.cached_tokens ?? 0,
    output: usage.completion_tokens ?? 0,
  };
}

/** The p90 of `xs` (0 for none). */
export const p90 = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] ?? 0;

/**
 * An ideal cache: one LRU of `capacityTokens` (every replica's together) fed every prompt of the run in order, with
 * its reply when given. Its hit rate, and the TTFT p90 it would give (each request's uncached tokens at the engines'
 * prefill pace): what no routing can beat.
 */
export function idealCache(
  prompts: readonly (readonly string[])[],
  o: { capacityTokens: number; prefillTokensPerS: number; replies?: readonly (readonly string[])[] },
): { hitRate: number; ttftP90: number } {
  const cache = createPrefixCache({ capacityTokens: o.capacityTokens });
  let prompt = 0;
  let cached = 0;
  const ttft = prompts.map((words, i) => {
    const c = cache.lookupAndInsert(words, o.replies?.[i]).cachedTokens;
    prompt += words.length;
    cached += c;
    return ((words.length - c) / o.prefillTokensPerS) * 1000;
  });
  return { hitRate: prompt ? cached / prompt : 0, ttftP90: p90(ttft) };
}

/** `messages` with `namespace` before the first one's content. */
export function namespaced<M extends { content: string }>(namespace: string, messages: M[]): M[] {
  return messages.map((m, i) => (i ? m : { ...m, content: `${namespace} ${m.content}` }));
}

/**
 * Replays `entries` open loop: request i leaves at its timestamp / `speed`, to `pick()` (a live target; a request
 * whose connection fails is sent once more to another pick, as a client's load balancer would). `namespace` starts
 * every prompt, so that one run never finds another run's blocks in the engines' caches.
 */
export async function replay(o: {
  entries: readonly TraceEntry[];
  speed: number;
  maxTokens: number;
  namespace: string;
  model: string;
  key: string;
  pick: () => string;
  onHalf?: () => void;
  /** Each entry's messages (trace.ts turnsOf). */
  turns: readonly (readonly Turn[])[];
  api: ReplayApi;
}): Promise<ReplayResult> {
  const t0 = performance.now();
  const start = o.entries[0]?.timestamp ?? 0;
  const half = Math.floor(o.entries.length / 2);
  const shots = await Promise.all(
    o.entries.map(async (e, i) => {
      const at = (e.timestamp - start) / o.speed;
      const wait = at - (performance.now() - t0);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (i === half) o.onHalf?.();
      const body = {
        model: o.model,
        ...replayBody(o.api, o.namespace, e, o.turns[i]!),
        max_tokens: Math.max(1, Math.min(e.output_length, o.maxTokens)),
        stream: true,
        stream_options: { include_usage: true },
      };
      for (let attempt = 0; ; attempt++) {
        try {
          return await send(o.pick(), REPLAY_PATHS[o.api], o.key, body);
        } catch (err) {
          if (attempt >= 1) return { ttftMs: -1, prompt: 0, cached: 0, output: 0, error: String(err) };
        }
      }
    }),
  );
  return { shots, seconds: (performance.now() - t0) / 1000 };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;

/** TTFT percentiles, hit rate (cached / prompt tokens as the engines reported them), throughput and errors. */
export function summarize(r: ReplayResult) {
  const ok = r.shots.filter((s) => !s.error && s.ttftMs >= 0);
  const ttft = ok.map((s) => s.ttftMs).sort((a, b) => a - b);
  const prompt = ok.reduce((n, s) => n + s.prompt, 0);
  const cached = ok.reduce((n, s) => n + s.cached, 0);
  return {
    requests: r.shots.length,
    errors: r.shots.length - ok.length,
    p50: pct(ttft, 0.5),
    p90: pct(ttft, 0.9),
    p99: pct(ttft, 0.99),
    hitRate: prompt ? cached / prompt : 0,
    reqPerS: ok.length / r.seconds,
    outTokPerS: ok.reduce((n, s) => n + s.output, 0) / r.seconds,
  };
}

/** The model spec's prefixRouting knobs a routing bench takes as flags: flag → knob, and its least value. */
const PREFIX_KNOBS = {
  "key-blocks": ["keyBlocks", 1],
  slack: ["slack", 0],
  "queue-factor": ["queueFactor", 0],
} as const;
/** Those flags for parseArgs, and --key-on (conversation or prompt). */
export const prefixKnobFlags = {
  "key-on": { type: "string" },
  "key-blocks": { type: "string" },
  slack: { type: "string" },
  "queue-factor": { type: "string" },
} as const;

/** The flag for how a replay sends its requests (ReplayApi), for parseArgs. */
export const replayApiFlag = { api: { type: "string", default: "chat" } } as const;

/** The --api flag's value, checked. */
export function replayApiOf(api: string | undefined): ReplayApi {
  if (api === undefined || api === "chat" || api === "completions") return api ?? "chat";
  throw new Error(`--api wants chat or completions, not ${JSON.stringify(api)}`);
}

/** The prefixRouting the given flags make (the knobs not given left to the router's defaults); throws on a bad value. */
export function prefixRoutingOf(
  values: Partial<Record<keyof typeof PREFIX_KNOBS | "key-on", string>>,
): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  const keyOn = values["key-on"];
  if (keyOn !== undefined) {
    if (keyOn !== "conversation" && keyOn !== "prompt")
      throw new Error(`--key-on wants conversation or prompt, not ${JSON.stringify(keyOn)}`);
    out.keyOn = keyOn;
  }
  for (const [flag, [knob, min]] of Object.entries(PREFIX_KNOBS)) {
    const x = values[flag as keyof typeof PREFIX_KNOBS];
    if (x === undefined) continue;
    const n = Number(x);
    if (x.trim() === "" || !Number.isFinite(n) || n < min)
      throw new Error(`--${flag} wants a number from ${min} up, not ${JSON.stringify(x)}`);
    out[knob] = n;
  }
  return out;
}
