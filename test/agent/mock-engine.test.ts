import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type MockEngine, type MockEngineOptions, startMockEngine } from "../../agent/sim/mock-engine.js";
import { LLMGW, start, stop, until } from "../helpers/process.js";

const engines: MockEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function mock(opts: Partial<MockEngineOptions> = {}) {
  const e = await startMockEngine({ model: "m", host: "127.0.0.1", tokensPerS: 0, ...opts });
  engines.push(e);
  const url = `http://127.0.0.1:${e.port}`;
  return { ...e, url, client: new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 }) };
}

const user = (content: string) => [{ role: "user" as const, content }];

describe("mock engine, in process", () => {
  it("answers chat completions in OpenAI's shape, respecting max_tokens", async () => {
    const { client } = await mock();
    const r = await client.chat.completions.create({ model: "m", messages: user("say three words"), max_tokens: 3 });
    expect(r).toMatchObject({
      object: "chat.completion",
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: "token0 token1 token2" }, finish_reason: "length" }],
    });
    expect(r.id).toMatch(/^chatcmpl-/);
    expect(r.usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
    const d = await client.chat.completions.create({ model: "m", messages: user("hi") });
    expect(d.choices[0]!.message.content!.split(" ")).toHaveLength(16);
    expect(d.choices[0]!.finish_reason).toBe("stop");
  });

  it("streams chat chunks as SSE, with a final usage chunk (empty choices) when include_usage is set", async () => {
    const { client } = await mock({ tokensPerS: 1000 });
    const stream = await client.chat.completions.create({
      model: "m",
      messages: user("a b c d"),
      max_completion_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "m")).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("token0 token1 token2 token3");
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("length");
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 },
    });

    const plain = await client.chat.completions.create({
      model: "m",
      messages: user("x"),
      max_tokens: 2,
      stream: true,
    });
    const seen = [];
    for await (const c of plain) seen.push(c);
    expect(seen.some((c) => "usage" in c)).toBe(false);
  });

  it("sends SSE headers and ends with data: [DONE]", async () => {
    const { url } = await mock();
    const r = await fetch(`${url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", prompt: "p", max_tokens: 2, stream: true }),
    });
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    const text = await r.text();
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(
      text
        .split("\n\n")
        .filter(Boolean)
        .every((e) => e.startsWith("data: ")),
    ).toBe(true);
  });

  it("answers text completions, streaming or not", async () => {
    const { client } = await mock();
    const r = await client.completions.create({ model: "m", prompt: "one two", max_tokens: 2 });
    expect(r).toMatchObject({
      object: "text_completion",
      choices: [{ index: 0, text: "token0 token1", finish_reason: "length" }],
      usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 },
    });
    const s = await client.completions.create({
      model: "m",
      prompt: ["one", "two three"],
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of s) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.text ?? "").join("")).toBe("token0 token1 token2");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 3 } });
  });

  it("answers embeddings (base64 as the SDK asks, or floats) with a small deterministic vector per input", async () => {
    const { client } = await mock();
    const one = await client.embeddings.create({ model: "m", input: "hello world" });
    expect(one).toMatchObject({ object: "list", model: "m", usage: { prompt_tokens: 2, total_tokens: 2 } });
    expect(one.data[0]!.embedding).toHaveLength(8);
    const two = await client.embeddings.create({
      model: "m",
      input: ["hello world", "other"],
      encoding_format: "float",
    });
    expect(two.data.map((d) => d.index)).toEqual([0, 1]);
    expect(two.data[0]!.embedding).toEqual(one.data[0]!.embedding);
    expect(two.data[1]!.embedding).not.toEqual(one.data[0]!.embedding);
  });

  it("lists its one model, and answers the Responses API", async () => {
    const { client } = await mock({ model: "org/model-7b" });
    const models = await client.models.list();
    expect(models.data).toEqual([
      { id: "org/model-7b", object: "model", created: expect.any(Number), owned_by: "llmgw-mock" },
    ]);
    const r = await client.responses.create({ model: "org/model-7b", input: "hello there", max_output_tokens: 2 });
    expect(r.output_text).toBe("token0 token1");
    expect(r.usage).toMatchObject({ input_tokens: 2, output_tokens: 2, total_tokens: 4 });
  });

  it("answers errors in OpenAI's shape: unknown model 404, malformed JSON 400, unknown path 404", async () => {
    const { client, url } = await mock();
    const err = await client.chat.completions.create({ model: "other", messages: user("x") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("model_not_found");
    const raw = await fetch(`${url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "other", prompt: "x" }),
    });
    expect(raw.status).toBe(404);
    expect(await raw.json()).toEqual({
      error: { message: expect.any(String), type: "invalid_request_error", code: "model_not_found" },
    });
    const bad = await fetch(`${url}/v1/chat/completions`, { method: "POST", body: "{not json" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: { message: expect.any(String), type: "invalid_request_error", code: "invalid_json" },
    });
    const nope = await fetch(`${url}/v2/nothing`);
    expect(nope.status).toBe(404);
    expect((await nope.json()).error.code).toBe("not_found");
  });

  it("answers /health 503 'Loading model' for --load-ms, then 200", async () => {
    const { url } = await mock({ loadMs: 400 });
    const first = await fetch(`${url}/health`);
    expect([first.status, await first.text()]).toEqual([503, "Loading model"]);
    await until(async () => (await fetch(`${url}/health`)).status === 200, 5_000, "/health 200");
  });

  it("counts requests and tokens in vLLM-named Prometheus metrics", async () => {
    const { client, url } = await mock();
    await client.chat.completions.create({ model: "m", messages: user("a b c"), max_tokens: 5 });
    await client.completions.create({ model: "m", prompt: "d e" });
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const [name, type] of [
      ["num_requests_running", "gauge"],
      ["num_requests_waiting", "gauge"],
      ["prompt_tokens_total", "counter"],
      ["generation_tokens_total", "counter"],
      ["request_success_total", "counter"],
    ]) {
      expect(text).toContain(`# HELP vllm:${name} `);
      expect(text).toContain(`# TYPE vllm:${name} ${type}\n`);
    }
    expect(text).toContain('vllm:num_requests_running{model_name="m"} 0\n');
    expect(text).toContain('vllm:prompt_tokens_total{model_name="m"} 5\n');
    expect(text).toContain('vllm:generation_tokens_total{model_name="m"} 21\n');
    expect(text).toContain('vllm:request_success_total{finished_reason="stop",model_name="m"} 1\n');
    expect(text).toContain('vllm:request_success_total{finished_reason="length",model_name="m"} 1\n');
  });

  it("shows the CUDA_/NCCL_/GLOO_/GGML_/LLMGW_ variables it was given on /debug/env", async () => {
    const { url } = await mock({
      env: {
        CUDA_VISIBLE_DEVICES: "2,3",
        NCCL_DEBUG: "INFO",
        GLOO_SOCKET_IFNAME: "eth0",
        GGML_CUDA_NO_PINNED: "1",
        LLMGW_RANK: "1",
        PATH: "/bin",
        HOME: "/root",
      },
    });
    expect(await (await fetch(`${url}/debug/env`)).json()).toEqual({
      CUDA_VISIBLE_DEVICES: "2,3",
      GGML_CUDA_NO_PINNED: "1",
      GLOO_SOCKET_IFNAME: "eth0",
      LLMGW_RANK: "1",
      NCCL_DEBUG: "INFO",
    });
  });

  it("fails the N-th completion request after its first chunk, and finishes in-flight streams on close", async () => {
    let crashed = 0;
    const e = await mock({ failAfter: 2, crash: () => crashed++ });
    await e.client.completions.create({ model: "m", prompt: "x" });
    const s = await e.client.chat.completions.create({ model: "m", messages: user("x"), stream: true });
    const got: unknown[] = [];
    await expect(
      (async () => {
        for await (const c of s) got.push(c);
      })(),
    ).rejects.toThrow();
    expect([got.length, crashed]).toEqual([1, 1]);

    const slow = await mock({ tokensPerS: 20 });
    const stream = await slow.client.chat.completions.create({
      model: "m",
      messages: user("x"),
      max_tokens: 100,
      stream: true,
    });
    const text: string[] = [];
    const done = (async () => {
      for await (const c of stream) text.push(c.choices[0]?.delta.content ?? "");
    })();
    await until(async () => text.length > 2, 5_000, "first tokens");
    const t0 = Date.now();
    await slow.close();
    await done;
    expect(Date.now() - t0).toBeLessThan(2_500);
    expect(text.join("").split(" ")).toHaveLength(100);
  });
});

describe("llmgw mock-engine, as a process", () => {
  const launch = async (args: string[], env: Record<string, string> = {}) => {
    const p = start(
      process.execPath,
      [LLMGW, "mock-engine", "--port", "0", "--model", "m", "--host", "127.0.0.1", ...args],
      { env },
    );
    const port = (await p.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]!;
    return { ...p, url: `http://127.0.0.1:${port}` };
  };

  it("prints its port and CUDA_VISIBLE_DEVICES, serves /health 200 and exits 0 on SIGTERM", async () => {
    const p = await launch([], { CUDA_VISIBLE_DEVICES: "5" });
    expect(p.output()).toMatch(/model m, loading for 0 ms, CUDA_VISIBLE_DEVICES=5\n/);
    expect((await fetch(`${p.url}/health`)).status).toBe(200);
    expect(await stop(p)).toBe(0);
  });

  it("with --fail-after 1 exits with status 1 mid-stream: the client sees the stream end early", async () => {
    const p = await launch(["--fail-after", "1"]);
    const client = new OpenAI({ baseURL: `${p.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: "m", messages: user("x"), stream: true });
    const got: unknown[] = [];
    await expect(
      (async () => {
        for await (const c of stream) got.push(c);
      })(),
    ).rejects.toThrow();
    expect(got).toHaveLength(1);
    expect(await p.exited).toBe(1);
  });

  it("rejects a bad flag with status 2", async () => {
    const p = start(process.execPath, [LLMGW, "mock-engine", "--port", "0", "--model", "m", "--tokens-per-s", "fast"]);
    expect(await p.exited).toBe(2);
    expect(p.output()).toContain("--tokens-per-s must be a number");
  });
});
