// Router tests that hold for every router llmgw has — the node:http one of `llmgw serve` and the fetch one of the
// Worker — run by test/e2e/router.test.ts and test/e2e/worker.test.ts against their own stacks. Each takes the
// server's URL and an API key that may use the model `chat`, served by mock engines.
import OpenAI from "openai";
import { expect } from "vitest";
import { hash32 } from "../../api/router/balancer.js";

/** A session id whose affinity sends requests to the replica at `index` of the model's (id-ordered) endpoints. */
export const sessionFor = (index: number, count: number) => {
  for (let i = 0; ; i++) if (hash32(`s${i}`) % count === index) return `s${i}`;
};

/** A request body sent in `times` chunks of `part`, without a content-length. */
const chunked = (part: string, times: number) =>
  new ReadableStream<Uint8Array>({
    pull(c) {
      if (times-- > 0) c.enqueue(new TextEncoder().encode(part));
      else c.close();
    },
  });

export const sdk = (url: string, apiKey: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });
export const post = (url: string, path: string, body: unknown, apiKey: string) =>
  fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

/** The value of one sample of GET /metrics (0 when absent). */
export async function metric(url: string, name: string, labels = ""): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ""} `) || (!labels && l.startsWith(`${name} `)));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

/** Chat (JSON and streamed, with and without usage asked for) and embeddings to the openai SDK; the model listed. */
export async function servesChat(url: string, key: string) {
  const c = sdk(url, key);
  const r = await c.chat.completions.create({
    model: "chat",
    messages: [{ role: "user", content: "hello there" }],
    max_tokens: 3,
  });
  expect(r.choices[0]!.message.content).toBe("token0 token1 token2");
  expect(r.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3 });

  const chunks = [];
  for await (const ch of await c.chat.completions.create({
    model: "chat",
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 4,
    stream: true,
  }))
    chunks.push(ch);
  expect(chunks.map((ch) => ch.choices[0]?.delta.content ?? "").join("")).toBe("token0 token1 token2 token3");
  // the router asked upstream for usage to count it, but the client did not: it gets no usage-only chunk
  expect(chunks.every((ch) => ch.choices.length > 0)).toBe(true);

  const withUsage = [];
  for await (const ch of await c.chat.completions.create({
    model: "chat",
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 2,
    stream: true,
    stream_options: { include_usage: true },
  }))
    withUsage.push(ch);
  expect(withUsage.at(-1)!.usage).toMatchObject({ completion_tokens: 2 });

  const e = await c.embeddings.create({ model: "chat", input: ["a", "b"] });
  expect(e.data).toHaveLength(2);
  expect((await c.models.list()).data.map((m) => m.id)).toContain("chat");
}

/** Bad requests answered in OpenAI's error shape; the router's body limit is 100,000 bytes. */
export async function refusesBadRequests(url: string, key: string) {
  const cases: [Promise<Response>, number, string][] = [
    [post(url, "/v1/chat/completions", "{not json", key), 400, "invalid_json"],
    [post(url, "/v1/chat/completions", { messages: [] }, key), 400, "missing_model"],
    [post(url, "/v1/chat/completions", { model: "nope", messages: [] }, key), 404, "model_not_found"],
    [
      post(
        url,
        "/v1/chat/completions",
        { model: "chat", messages: [{ role: "user", content: "x".repeat(120_000) }] },
        key,
      ),
      413,
      "request_too_large",
    ],
    // no content-length: the size is counted as the body arrives
    [
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
        body: chunked("x".repeat(60_000), 3),
        duplex: "half",
      } as RequestInit),
      413,
      "request_too_large",
    ],
    [post(url, "/v1/fine_tuning/jobs", { model: "chat" }, key), 404, "unknown_endpoint"],
    [post(url, "/v1/chat/completions", { model: "chat" }, "llmgw_key_wrong"), 401, "invalid_api_key"],
    [fetch(`${url}/v1/models`), 401, "missing_api_key"],
  ];
  for (const [res, status, code] of cases) {
    const r = await res;
    expect([r.status, ((await r.json()) as { error: { code: string } }).error.code]).toEqual([status, code]);
  }
}

/** A key whose allow-list leaves `chat` out gets 403. */
export async function refusesModelsNotAllowed(url: string, narrowKey: string) {
  const r = await post(url, "/v1/completions", { model: "chat", prompt: "x" }, narrowKey);
  expect(r.status).toBe(403);
  expect(((await r.json()) as { error: { code: string } }).error.code).toBe("model_not_allowed");
}

/**
 * With the replica at index 0 of `chat`'s two dead, requests whose session goes to it are retried on the other one
 * before the first byte; the dead endpoint is then quarantined, so only the first request retries.
 */
export async function failsOverBeforeTheFirstByte(url: string, key: string) {
  const session = sessionFor(0, 2);
  const before = await metric(url, "llmgw_router_retries_total");
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${url}/v1/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-session-id": session },
      body: JSON.stringify({ model: "chat", prompt: "x", max_tokens: 1 }),
    });
    expect(r.status).toBe(200);
  }
  expect(await metric(url, "llmgw_router_retries_total")).toBe(before + 1);
  expect(await metric(url, "llmgw_router_upstream_errors_total", 'model="chat",kind="refused"')).toBe(1);
}
