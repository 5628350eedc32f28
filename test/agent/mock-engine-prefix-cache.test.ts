// The mock engine's prefix (KV) cache through real HTTP requests: cached_tokens in usage as vLLM reports it, the
// prefill wait it computes (x-mock-prefill-ms), vLLM's prefix cache counters, and the `llmgw mock-engine` flags.
import OpenAI from "openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type MockEngine, type MockEngineOptions, startMockEngine } from "../../agent/sim/mock-engine.js";
import { cliFlags } from "../../bin/mock-engine.js";
import { LLMGW, start, stop } from "../helpers/process.js";

const engines: MockEngine[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function mock(opts: Partial<MockEngineOptions> = {}) {
  const e = await startMockEngine({ model: "m", host: "127.0.0.1", tokensPerS: 0, ...opts });
  engines.push(e);
  const url = `http://127.0.0.1:${e.port}`;
  return { ...e, url, client: new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 }) };
}

/** `n` distinct words. */
const words = (n: number, tag = "w") => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(" ");
const user = (content: string) => [{ role: "user" as const, content }];
const prefillMs = (r: Response) => Number(r.headers.get("x-mock-prefill-ms"));
// 1M tokens/s keeps the waits far below a millisecond a block while the figures stay exact
const FAST = { prefixCacheTokens: 10_000, blockTokens: 16, prefillTokensPerS: 1_000_000 };

describe("mock engine prefix cache", () => {
  it("reports cached_tokens for a repeated chat prompt, and a shorter prefill", async () => {
    const { client } = await mock({ ...FAST, ttftBaseMs: 5 });
    const body = { model: "m", messages: user(words(200)), max_tokens: 2 };
    const first = await client.chat.completions.create(body).withResponse();
    expect(first.data.usage).toEqual({ prompt_tokens: 200, completion_tokens: 2, total_tokens: 202 });
    expect(prefillMs(first.response)).toBe(5.2); // 5 ms + 200 tokens at 1M tokens/s
    const again = await client.chat.completions.create(body).withResponse();
    // 192 = 12 full blocks: the 13th would hold the last prompt token, which vLLM always recomputes
    expect(again.data.usage).toEqual({
      prompt_tokens: 200,
      completion_tokens: 2,
      total_tokens: 202,
      prompt_tokens_details: { cached_tokens: 192 },
    });
    expect(prefillMs(again.response)).toBe(5.008);
  });

  it("hits the previous turn and its reply in a conversation", async () => {
    const { client } = await mock(FAST);
    const turn1 = user(words(40));
    const r1 = await client.chat.completions.create({ model: "m", messages: turn1, max_tokens: 30 });
    const reply = { role: "assistant" as const, content: r1.choices[0]!.message.content! };
    const turn2 = [...turn1, reply, ...user(words(5, "u"))];
    const r2 = await client.chat.completions.create({ model: "m", messages: turn2, max_tokens: 1 });
    // 40 prompt + 29 computed reply tokens = 69: four full blocks, two past the first turn's prompt
    expect(r2.usage).toMatchObject({ prompt_tokens: 75, prompt_tokens_details: { cached_tokens: 64 } });
  });

  it("reports cached_tokens in the final usage chunk of a stream, and waits the prefill before the first chunk", async () => {
    const { client } = await mock({ prefixCacheTokens: 10_000, prefillTokensPerS: 20_000 });
    const req = {
      model: "m",
      messages: user(words(3_000)),
      max_tokens: 3,
      stream: true as const,
      stream_options: { include_usage: true },
    };
    const timed = async () => {
      const t0 = performance.now();
      const { data, response } = await client.chat.completions.create(req).withResponse();
      let ttft = 0;
      const chunks = [];
      for await (const c of data) {
        ttft ||= performance.now() - t0;
        chunks.push(c);
      }
      return { ttft, usage: chunks.at(-1)!.usage, wait: prefillMs(response) };
    };
    const cold = await timed();
    expect(cold.wait).toBe(150); // 3,000 uncached tokens at 20,000 tokens/s
    expect(cold.ttft).toBeGreaterThanOrEqual(140); // the wait really happens (a lower bound only)
    expect(cold.usage).toEqual({ prompt_tokens: 3_000, completion_tokens: 3, total_tokens: 3_003 });
    const warm = await timed();
    expect(warm.wait).toBe(0.4); // 2,992 cached: 8 tokens left
    expect(warm.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 2_992 } });
  });

  it("caches text completions (words or token ids) and the Responses API", async () => {
    const { client, url } = await mock(FAST);
    await client.completions.create({ model: "m", prompt: words(50), max_tokens: 1 });
    const text = await client.completions.create({ model: "m", prompt: words(50), max_tokens: 1 });
    expect(text.usage).toMatchObject({ prompt_tokens: 50, prompt_tokens_details: { cached_tokens: 48 } });
    const ids = Array.from({ length: 40 }, (_, i) => 1000 + i);
    for (const cached of [undefined, 32]) {
      const r = await fetch(`${url}/v1/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "m", prompt: ids, max_tokens: 1 }),
      });
      expect((await r.json()).usage.prompt_tokens_details?.cached_tokens).toBe(cached);
    }
    const resp = () => client.responses.create({ model: "m", input: words(33, "r"), max_output_tokens: 1 });
    expect((await resp()).usage).toMatchObject({ input_tokens: 33, input_tokens_details: { cached_tokens: 0 } });
    expect((await resp()).usage).toMatchObject({ input_tokens: 33, input_tokens_details: { cached_tokens: 32 } });
  });

  it("keys blocks on the prompt text alone, one cache per replica", async () => {
    const a = await mock(FAST);
    const b = await mock(FAST);
    const ask = (e: typeof a, content: string, session: string) =>
      e.client.chat.completions.create(
        { model: "m", messages: user(content), max_tokens: 1, user: session },
        { headers: { "x-session-id": session } },
      );
    await ask(a, words(64), "s1");
    expect((await ask(a, words(64), "s2")).usage?.prompt_tokens_details?.cached_tokens).toBe(48);
    expect((await ask(a, words(64, "v"), "s1")).usage?.prompt_tokens_details).toBeUndefined();
    expect((await ask(b, words(64), "s1")).usage?.prompt_tokens_details).toBeUndefined();
  });

  it("counts queried and hit tokens in vLLM's prefix cache counters", async () => {
    const { client, url } = await mock(FAST);
    await client.completions.create({ model: "m", prompt: words(20), max_tokens: 1 });
    await client.completions.create({ model: "m", prompt: words(20), max_tokens: 1 });
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const name of ["prefix_cache_queries_total", "prefix_cache_hits_total"])
      expect(text).toContain(`# HELP vllm:${name} Prefix cache `);
    expect(text).toContain("# TYPE vllm:prefix_cache_queries_total counter\n");
    expect(text).toContain('vllm:prefix_cache_queries_total{model_name="m"} 40\n');
    expect(text).toContain('vllm:prefix_cache_hits_total{model_name="m"} 16\n');
  });

  it("without a prefix cache or prefill pace: no wait, no header, no cached_tokens, no counters", async () => {
    const { client, url } = await mock();
    for (let i = 0; i < 2; i++) {
      const { data, response } = await client.chat.completions
        .create({ model: "m", messages: user(words(100)), max_tokens: 1 })
        .withResponse();
      expect(data.usage).toEqual({ prompt_tokens: 100, completion_tokens: 1, total_tokens: 101 });
      expect(response.headers.get("x-mock-prefill-ms")).toBeNull();
    }
    expect(await (await fetch(`${url}/metrics`)).text()).not.toContain("prefix_cache");
  });

  it("with a prefill pace and no cache, prefills the whole prompt every time", async () => {
    const { client } = await mock({ prefillTokensPerS: 1_000_000 });
    for (let i = 0; i < 2; i++) {
      const r = await client.completions.create({ model: "m", prompt: words(500), max_tokens: 1 }).withResponse();
      expect([prefillMs(r.response), r.data.usage?.prompt_tokens_details]).toEqual([0.5, undefined]);
    }
  });
});

describe("mock engine prefill queue", () => {
  // two different 1,000-token prompts sent at once: 100 ms of prefill each at 10,000 tokens/s
  const both = async (opts: Partial<MockEngineOptions>) => {
    const { url } = await mock({ prefixCacheTokens: 10_000, prefillTokensPerS: 10_000, ...opts });
    const send = (tag: string) =>
      fetch(`${url}/v1/completions`, {
        method: "POST",
        body: JSON.stringify({ prompt: words(1000, tag), max_tokens: 1 }),
      });
    return (await Promise.all([send("a"), send("b")])).map(prefillMs).sort((x, y) => x - y);
  };

  it("prefills one request at a time: the second waits for the first", async () => {
    const [first, second] = await both({});
    expect(first).toBe(100);
    // its own 100 ms behind what was left of the first's when it arrived
    expect(second).toBeGreaterThan(150);
    expect(second).toBeLessThanOrEqual(200);
  });

  it("with prefillQueue false, prefills each as if alone", async () => {
    expect(await both({ prefillQueue: false })).toEqual([100, 100]);
  });
});

describe("llmgw mock-engine prefix cache flags", () => {
  const launch = async (args: string[]) => {
    const p = start(process.execPath, [
      LLMGW,
      "mock-engine",
      "--port",
      "0",
      "--model",
      "m",
      "--host",
      "127.0.0.1",
      ...args,
    ]);
    const port = (await p.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]!;
    return { ...p, url: `http://127.0.0.1:${port}` };
  };
  const complete = async (url: string, prompt: string) => {
    const r = await fetch(`${url}/v1/completions`, { method: "POST", body: JSON.stringify({ prompt, max_tokens: 1 }) });
    return { wait: prefillMs(r), usage: (await r.json()).usage };
  };

  it("--prefix-cache-tokens, --block-tokens, --prefill-tokens-per-s and --ttft-base-ms shape the cache and the wait", async () => {
    const p = await launch([
      ...["--prefix-cache-tokens", "1000", "--block-tokens", "4"],
      ...["--prefill-tokens-per-s", "1000000", "--ttft-base-ms", "2"],
    ]);
    expect(await complete(p.url, words(10))).toEqual({
      wait: 2.01,
      usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
    });
    expect((await complete(p.url, words(10))).usage.prompt_tokens_details).toEqual({ cached_tokens: 8 });
    expect(await stop(p)).toBe(0);
  });

  it("--prefix-cache alone keeps 16-token blocks and prefills at 10,000 tokens/s", async () => {
    const p = await launch(["--prefix-cache"]);
    expect((await complete(p.url, words(100))).wait).toBe(10);
    const again = await complete(p.url, words(100));
    expect([again.wait, again.usage.prompt_tokens_details]).toEqual([0.4, { cached_tokens: 96 }]);
    expect(await stop(p)).toBe(0);
  });

  it("--no-prefill-queue prefills each request as if alone", async () => {
    const p = await launch(["--prefix-cache", "--no-prefill-queue"]);
    const waits = await Promise.all([complete(p.url, words(1000, "a")), complete(p.url, words(1000, "b"))]);
    expect(waits.map((w) => w.wait)).toEqual([100, 100]);
    expect(await stop(p)).toBe(0);
  });

  it("rejects a block of no tokens with status 2", async () => {
    const p = start(process.execPath, [LLMGW, "mock-engine", "--port", "0", "--model", "m", "--block-tokens", "0"]);
    expect(await p.exited).toBe(2);
    expect(p.output()).toContain("--block-tokens must be an integer from 1 up");
  });

  it("mock-engine-cli takes the cache from LLMGW_MOCK_* and vLLM's --block-size", () => {
    vi.stubEnv("LLMGW_MOCK_PREFIX_CACHE_TOKENS", "50000");
    vi.stubEnv("LLMGW_MOCK_PREFILL_TOKENS_PER_S", "8000");
    vi.stubEnv("LLMGW_MOCK_TTFT_BASE_MS", "20");
    vi.stubEnv("LLMGW_MOCK_PREFILL_QUEUE", "0");
    expect(cliFlags("vllm", ["serve", "/w/m", "--port", "9000", "--block-size", "32"])).toMatchObject({
      prefixCacheTokens: "50000",
      blockTokens: "32",
      prefillTokensPerS: "8000",
      ttftBaseMs: "20",
      prefillQueue: false,
    });
    expect(cliFlags("sglang", ["--model-path", "/w/m", "--block-size", "32"]).blockTokens).toBeUndefined();
  });
});
