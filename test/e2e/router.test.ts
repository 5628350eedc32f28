// The OpenAI-compatible router with real mock-engine processes behind it and the official openai SDK in front.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAll, until } from "../helpers/process.js";
import { type Stack, startStack } from "../helpers/router.js";
import {
  failsOverBeforeTheFirstByte,
  metric as metricAt,
  post as postTo,
  refusesBadRequests,
  refusesModelsNotAllowed,
  sdk as sdkAt,
  servesChat,
} from "../helpers/router-cases.js";

let s: Stack;
let key = "";
let chat: Awaited<ReturnType<Stack["replicas"]>>;
const sdk = (apiKey = key) => sdkAt(s.url, apiKey);
const post = (path: string, body: unknown, apiKey = key) => postTo(s.url, path, body, apiKey);
const metric = (name: string, labels = "") => metricAt(s.url, name, labels);

beforeAll(async () => {
  s = await startStack({ maxRequestBytes: 100_000, quarantineMs: 60_000 });
  key = await s.key("all");
  chat = await s.replicas("chat", 2, () => ["--tokens-per-s", "50"]);
}, 60_000);
afterAll(async () => {
  await killAll();
  await s?.close();
});

describe("router", () => {
  it("serves chat (JSON and streamed) and embeddings to the openai SDK, and lists the model", async () => {
    await servesChat(s.url, key);
    expect((await sdk().models.list()).data.map((m) => m.id)).toEqual(["chat"]);
  });

  it("passes each streamed chunk on as it arrives (no buffering)", async () => {
    const times: number[] = [];
    for await (const ch of await sdk().completions.create({
      model: "chat",
      prompt: "count",
      max_tokens: 10,
      stream: true,
    }))
      if (ch.choices[0]?.text) times.push(performance.now());
    expect(times).toHaveLength(10);
    // 50 tokens/s upstream: ten chunks over ~180 ms; a buffering proxy would deliver them in one burst
    expect(times.at(-1)! - times[0]!).toBeGreaterThan(100);
    expect(new Set(times.map((t) => Math.round(t / 10))).size).toBeGreaterThan(5);
  });

  it("relays a body larger than the sockets hold to a client that reads slowly, whole and in order", async () => {
    await s.replicas("bulk", 1, () => ["--tokens-per-s", "0"]);
    const n = 1_500_000; // ~17 MB of text: the router has to wait for the client's socket to drain many times
    const r = await post("/v1/completions", { model: "bulk", prompt: "x", max_tokens: n });
    expect(r.status).toBe(200);
    const reader = r.body!.getReader();
    const parts: Uint8Array[] = [];
    for (let got = await reader.read(); !got.done; got = await reader.read()) {
      parts.push(got.value);
      await new Promise(setImmediate); // a slow reader: one chunk per turn of the event loop
    }
    const text = (JSON.parse(Buffer.concat(parts).toString("utf8")) as { choices: { text: string }[] }).choices[0]!
      .text;
    const words = text.split(" ");
    expect(words).toHaveLength(n);
    expect(words.every((w, i) => w === `token${i}`)).toBe(true);
  }, 30_000);

  it("answers bad requests in OpenAI's error shape", () => refusesBadRequests(s.url, key));

  it("says why a declared model has no ready replica (503)", async () => {
    await s.api("PUT", "/api/v1/models/ghost", {
      spec: { weightsPath: "/m/ghost", profiles: [{ name: "big", engine: "vllm", gpuClass: "b300-288g" }] },
    });
    await s.api("PUT", "/api/v1/deployments/ghost", { spec: { model: "ghost", replicas: 1 } });
    await until(
      async () => (await post("/v1/chat/completions", { model: "ghost", messages: [] })).status === 503,
      5000,
      "503 for ghost",
    );
    const r = await post("/v1/chat/completions", { model: "ghost", messages: [] });
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("no_ready_replica");
    expect(body.error.message).toMatch(/^no ready replica of ghost: no node in pool default/);
    expect((await sdk().models.list()).data.map((m) => m.id)).not.toContain("ghost");
  });

  it("enforces API keys: allow-lists (403) and requests per minute (429 with Retry-After)", async () => {
    await refusesModelsNotAllowed(s.url, await s.key("narrow", { models: ["other"] }));

    const limited = await s.key("limited", { requestsPerMinute: 2 });
    for (let i = 0; i < 2; i++)
      expect((await post("/v1/completions", { model: "chat", prompt: "x", max_tokens: 1 }, limited)).status).toBe(200);
    const r429 = await post("/v1/completions", { model: "chat", prompt: "x", max_tokens: 1 }, limited);
    expect(r429.status).toBe(429);
    expect(Number(r429.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await r429.json()) as { error: { type: string } }).error.type).toBe("rate_limit_error");
  });

  it("a client that goes away aborts the upstream request, and the counters return to zero", async () => {
    const [slow] = await s.replicas("slow", 1, () => ["--tokens-per-s", "10"]);
    const ac = new AbortController();
    const stream = await sdk().completions.create(
      { model: "slow", prompt: "long", max_tokens: 200, stream: true },
      { signal: ac.signal },
    );
    for await (const _ of stream) break; // the first chunk, then the client leaves
    ac.abort();
    const running = async () =>
      Number(/vllm:num_requests_running\{[^}]*\} (\d+)/.exec(await (await fetch(`${slow!.url}/metrics`)).text())?.[1]);
    await until(async () => (await running()) === 0, 5000, "the engine's request to end");
    await until(async () => s.routing.router.balancer.outstanding().size === 0, 5000, "outstanding counts to drain");
    expect(await metric("llmgw_router_inflight", 'model="slow"')).toBe(0);
  });

  it("a replica that dies mid-stream gives the client a clean error; nothing is retried and the counters return to zero", async () => {
    await s.replicas("fragile", 1, () => ["--fail-after", "1", "--tokens-per-s", "20"]);
    const seen: string[] = [];
    const run = async () => {
      for await (const ch of await sdk().chat.completions.create({
        model: "fragile",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 50,
        stream: true,
      }))
        seen.push(ch.choices[0]?.delta.content ?? "");
    };
    await expect(run()).rejects.toThrow(/mid-stream|terminated|upstream/i);
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.length).toBeLessThan(50);
    await until(async () => s.routing.router.balancer.outstanding().size === 0, 5000, "outstanding counts to drain");
    expect(await metric("llmgw_router_inflight", 'model="fragile"')).toBe(0);
  });

  it("counts token usage per key and model, written in batches", async () => {
    await s.routing.router.usage.flush();
    const u = await s.api("GET", "/api/v1/usage?key=all&model=chat");
    expect(u.status).toBe(200);
    expect(u.body.totals.promptTokens).toBeGreaterThan(0);
    expect(u.body.totals.completionTokens).toBeGreaterThanOrEqual(3 + 4 + 2 + 10);
  });

  it("fails over to another replica when one refuses connections before the first byte", async () => {
    chat[0]!.proc.child.kill("SIGKILL");
    await chat[0]!.proc.exited;
    await failsOverBeforeTheFirstByte(s.url, key);
  });

  it("keeps serving from its last endpoint table and known keys when the database is unreachable", async () => {
    s.client.close();
    await until(async () => s.routing.router.table.staleness() !== null, 5000, "the table read to fail");
    const r = await sdk().completions.create({ model: "chat", prompt: "still", max_tokens: 2 });
    expect(r.choices[0]!.text).toBe("token0 token1");
    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { detail: string }).detail).toMatch(
      /database unreachable: [\s\S]*; the router keeps serving from its endpoint table of \d+ s ago/,
    );
  });
});

describe("fair sharing between API keys", () => {
  let f: Stack;
  beforeAll(async () => {
    // two slots for the model's one replica, and a deadline no request here reaches
    f = await startStack({ maxInflightPerReplica: 2, queueTimeoutMs: 60_000 });
    await f.replicas("fair", 1, () => ["--tokens-per-s", "20"]);
  }, 60_000);
  afterAll(() => f?.close());

  it("serves a quiet key at its round-robin turn, not behind a flooding key's backlog", async () => {
    const [flood, quiet] = [await f.key("flood"), await f.key("quiet")];
    const finished: ("flood" | "quiet")[] = [];
    const ask = (who: "flood" | "quiet", secret: string) =>
      postTo(f.url, "/v1/completions", { model: "fair", prompt: "x", max_tokens: 4 }, secret).then(async (r) => {
        await r.text();
        finished.push(who);
        return r.status;
      });
    const floods = Array.from({ length: 30 }, () => ask("flood", flood));
    // the flood's backlog, counted by the queue once every flood request reached it and before the quiet key asks
    // (each request holds a slot ~200 ms)
    const q = f.routing.router.fairQueue;
    for (let i = 0; i < 2000 && q.waiting("fair") + q.active("fair") + finished.length < 30; i++)
      await new Promise((ok) => setTimeout(ok, 5));
    const backlog = q.waiting("fair");
    expect(backlog).toBeGreaterThanOrEqual(16);
    const quiets = Array.from({ length: 3 }, () => ask("quiet", quiet));
    expect(await Promise.all([...floods, ...quiets])).toEqual(new Array(33).fill(200));
    // round-robin: the quiet key's three requests go at every other free slot, so nearly all of the flood's backlog
    // finishes after them; first come, first served would finish the whole backlog first
    const floodAfterQuiet = finished.length - 1 - finished.lastIndexOf("quiet");
    expect(floodAfterQuiet, finished.join(" ")).toBeGreaterThanOrEqual(backlog / 2);
    expect(await metricAt(f.url, "llmgw_router_queue_depth", 'model="fair"')).toBe(0);
    expect(await metricAt(f.url, "llmgw_router_queue_wait_seconds_count", 'model="fair"')).toBeGreaterThanOrEqual(
      backlog + 3,
    );
    expect(q.active()).toBe(0);
  });
});
