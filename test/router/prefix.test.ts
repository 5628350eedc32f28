import { describe, expect, it } from "vitest";
import { byPrefix, choose } from "../../api/router/balancer.js";
import { prefixKey } from "../../api/router/prefix.js";
import { promptHead } from "../../api/router/prompt-text.js";
import { routingOf } from "../../api/router/routing.js";
import type { Endpoint } from "../../api/router/types.js";

const S = { blockChars: 64, keyBlocks: 4 };
const ep = (id: string): Endpoint => ({ replicaId: id, deployment: "d", model: "m", url: `http://${id}:1` });
const replicas = ["r1", "r2", "r3", "r4"].map(ep);
const idle = () => 0;
const chat = (...contents: string[]) => ({
  model: "m",
  messages: contents.map((content, i) => ({ role: i ? "user" : "system", content })),
});
const SYSTEM = "You are a careful assistant for the ACME tenant. ".repeat(8);

describe("promptHead", () => {
  it("renders tools, then each message's role and content, as far as the limit", () => {
    const body = {
      tools: [{ type: "function", function: { name: "f" } }],
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "hi" }, { type: "image_url" }] },
      ],
    };
    expect(promptHead("/v1/chat/completions", body, 1000)).toBe(
      `${JSON.stringify(body.tools)}system:be brief\nuser:hi[image_url]\n`,
    );
    expect(promptHead("/v1/chat/completions", body, 10)).toBe(JSON.stringify(body.tools).slice(0, 10));
  });

  it("takes a completion's prompt and a response's instructions and input", () => {
    expect(promptHead("/v1/completions", { prompt: "once upon" }, 100)).toBe("once upon");
    expect(promptHead("/v1/completions", { prompt: ["first", "second"] }, 100)).toBe("first");
    // token ids, alone or the first of a batch, as far as the limit
    expect(promptHead("/v1/completions", { prompt: [101, 7, 2023] }, 100)).toBe("101 7 2023 ");
    expect(promptHead("/v1/completions", { prompt: [[5, 6], [7]] }, 100)).toBe("5 6 ");
    expect(promptHead("/v1/completions", { prompt: Array.from({ length: 1000 }, (_, i) => i) }, 10)).toBe("0 1 2 3 4 ");
    expect(promptHead("/v1/responses", { instructions: "be kind", input: "hello" }, 100)).toBe("be kind\nhello");
    expect(promptHead("/v1/responses", { input: [{ role: "user", content: "q" }] }, 100)).toBe("\nuser:q\n");
  });

  it("reads no further than the limit into a long prompt", () => {
    const long = "word ".repeat(100_000);
    expect(promptHead("/v1/chat/completions", chat(long), 256)).toHaveLength(256);
  });
});

describe("prefixKey", () => {
  it("with keyOn: prompt keys on the prompt's leading blocks, so requests sharing a long system part stay together", () => {
    const DOCUMENT = "The quarterly report of the ACME company, section by section. ".repeat(200);
    const a = chat(DOCUMENT, "What was the revenue?");
    const b = chat(DOCUMENT, "Who signed the report?");
    const prompt = { ...S, keyOn: "prompt" as const };
    expect(prefixKey("/v1/chat/completions", a, prompt)).toBe(prefixKey("/v1/chat/completions", b, prompt));
    expect(prefixKey("/v1/chat/completions", a, S)).not.toBe(prefixKey("/v1/chat/completions", b, S));
    // the same as a prompt with no system part: its opening characters
    const whole = { model: "m", messages: [{ role: "user", content: "x".repeat(1000) }] };
    const asUser = { model: "m", messages: [{ role: "user", content: `${"x".repeat(1000)}?` }] };
    expect(prefixKey("/v1/chat/completions", whole, prompt)).toBe(prefixKey("/v1/chat/completions", asUser, prompt));
  });

  it("keys a conversation on its system part and first user message: every turn alike, conversations apart", () => {
    const turn1 = chat(SYSTEM, "What is 2 + 2?");
    const turn2 = {
      ...turn1,
      messages: [...turn1.messages, { role: "assistant", content: "4" }, { role: "user", content: "And 3 + 3?" }],
    };
    const other = chat(SYSTEM, "Write a poem about the sea.");
    expect(SYSTEM.length).toBeGreaterThan(S.blockChars * S.keyBlocks);
    expect(prefixKey("/v1/chat/completions", turn2, S)).toBe(prefixKey("/v1/chat/completions", turn1, S));
    expect(prefixKey("/v1/chat/completions", other, S)).not.toBe(prefixKey("/v1/chat/completions", turn1, S));
    // reading stops at each part's limit: what follows within a long first message does not move the key
    const long = (tail: string) => chat(SYSTEM, `${"context ".repeat(100)}${tail}`);
    expect(prefixKey("/v1/chat/completions", long("a"), S)).toBe(prefixKey("/v1/chat/completions", long("b"), S));
    // tools are part of the system part
    const tools = { ...turn1, tools: [{ type: "function", function: { name: "f" } }] };
    expect(prefixKey("/v1/chat/completions", tools, S)).not.toBe(prefixKey("/v1/chat/completions", turn1, S));
  });

  it("depends on the rendered text only, not on how the content was split into parts", () => {
    const parts = (...texts: string[]) => texts.map((text) => ({ type: "text", text }));
    const asString = {
      messages: [
        { role: "system", content: "abc" },
        { role: "user", content: "hello there" },
      ],
    };
    const asParts = {
      messages: [
        { role: "system", content: parts("a", "bc") },
        { role: "user", content: parts("hel", "lo", " there") },
      ],
    };
    expect(prefixKey("/v1/chat/completions", asParts, S)).toBe(prefixKey("/v1/chat/completions", asString, S));
    const long = (content: unknown) => prefixKey("/v1/completions", { prompt: content }, S);
    expect(long(["x".repeat(301)])).toBe(long("x".repeat(301)));
  });

  it("keys a response on its instructions and first input the same way", () => {
    const r = (input: unknown) => prefixKey("/v1/responses", { instructions: SYSTEM, input }, S);
    expect(r("hello")).toBe(
      r([
        { role: "user", content: "hello" },
        { role: "assistant", content: "hi" },
      ]),
    );
    expect(r("hello")).not.toBe(r("goodbye"));
  });

  it("keys a prompt with no system part on its leading blocks, whatever follows", () => {
    const opening = "Summarise the following report for the board. ".repeat(8);
    const a = prefixKey("/v1/chat/completions", { messages: [{ role: "user", content: `${opening} one` }] }, S);
    const b = prefixKey("/v1/chat/completions", { messages: [{ role: "user", content: `${opening} two` }] }, S);
    expect(opening.length).toBeGreaterThan(S.blockChars * S.keyBlocks);
    expect(a).toBe(b);
    expect(prefixKey("/v1/completions", { prompt: `${opening} one` }, S)).toBe(
      prefixKey("/v1/completions", { prompt: `${opening} two` }, S),
    );
  });

  it("differs when a leading block differs", () => {
    const a = prefixKey("/v1/chat/completions", chat(SYSTEM), S);
    const b = prefixKey("/v1/chat/completions", chat(SYSTEM.replace("ACME", "Initech")), S);
    expect(a).not.toBe(b);
  });

  it("keys a completion given as token ids on its leading ids", () => {
    const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => 1000 + i + from);
    const key = (prompt: unknown) => prefixKey("/v1/completions", { model: "m", prompt }, S);
    // past the key's blocks, the rest of the prompt does not move it; a different opening does
    expect(key([...ids(200), 1, 2, 3])).toBe(key([...ids(200), 9, 9]));
    expect(key(ids(200))).not.toBe(key(ids(200, 1)));
    expect(key([ids(200), ids(3)])).toBe(key(ids(200)));
    expect(key(ids(200))).toBeDefined();
    // each id ends at its space: [12, 3] and [1, 23] do not render alike
    expect(key([12, 3])).not.toBe(key([1, 23]));
  });

  it("keys a short prompt on its full blocks, or its whole text, and has no key without a prompt", () => {
    const short = prefixKey("/v1/completions", { prompt: "x".repeat(100) }, S);
    expect(short).toBe(prefixKey("/v1/completions", { prompt: `${"x".repeat(100)}yz` }, S));
    expect(prefixKey("/v1/completions", { prompt: "hi" }, S)).not.toBe(
      prefixKey("/v1/completions", { prompt: "ho" }, S),
    );
    expect(prefixKey("/v1/embeddings", { input: "x" }, S)).toBeUndefined();
    expect(prefixKey("/v1/chat/completions", { messages: [] }, S)).toBeUndefined();
  });
});

describe("byPrefix", () => {
  const keys = Array.from({ length: 4000 }, (_, i) => prefixKey("/v1/completions", { prompt: `tenant ${i}` }, S)!);

  it("gives a key the same replica whatever the order of the replicas (every instance agrees)", () => {
    for (const key of keys.slice(0, 200)) {
      const a = byPrefix(replicas, idle, { key, loadFactor: 1.25, slack: 0 });
      const b = byPrefix([...replicas].reverse(), idle, { key, loadFactor: 1.25, slack: 0 });
      expect(a?.replicaId).toBe(b?.replicaId);
    }
  });

  it("spreads keys evenly, and a replica leaving moves only the keys it held", () => {
    const owner = (pool: Endpoint[], key: number) =>
      byPrefix(pool, idle, { key, loadFactor: 1.25, slack: 0 })!.replicaId;
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(owner(replicas, key), (counts.get(owner(replicas, key)) ?? 0) + 1);
    for (const r of replicas) expect(counts.get(r.replicaId)).toBeGreaterThan(800);
    const fewer = replicas.filter((r) => r.replicaId !== "r3");
    for (const key of keys) if (owner(replicas, key) !== "r3") expect(owner(fewer, key)).toBe(owner(replicas, key));
  });

  it("skips a replica whose outstanding requests would pass the bound, for the next in the key's order", () => {
    const key = keys[0]!;
    const first = byPrefix(replicas, idle, { key, loadFactor: 1.25, slack: 0 })!;
    const busy = (url: string) => (url === first.url ? 3 : 0);
    // 3 outstanding, 4 replicas: the bound is ceil(1.25 × 4 / 4) = 2, which the key's replica would pass
    const next = byPrefix(replicas, busy, { key, loadFactor: 1.25, slack: 0 })!;
    expect(next.replicaId).not.toBe(first.replicaId);
    // at loadFactor 4 the bound is ceil(4 × 4 / 4) = 4: the key's replica keeps it
    expect(byPrefix(replicas, busy, { key, loadFactor: 4, slack: 0 })!.replicaId).toBe(first.replicaId);
  });

  it("keeps the key's replica while it is within the slack of the least loaded one, whatever the mean", () => {
    const key = keys[0]!;
    const first = byPrefix(replicas, idle, { key, loadFactor: 1.25, slack: 0 })!;
    const load = (mine: number) => (url: string) => (url === first.url ? mine : 0);
    // 2 outstanding on the key's replica, none elsewhere: over the bound (ceil(1.25 × 3 / 4) = 1), within a slack of 2
    expect(byPrefix(replicas, load(2), { key, loadFactor: 1.25, slack: 2 })!.replicaId).toBe(first.replicaId);
    expect(byPrefix(replicas, load(2), { key, loadFactor: 1.25, slack: 0 })!.replicaId).not.toBe(first.replicaId);
    // 3 more than the least: past the slack too
    expect(byPrefix(replicas, load(3), { key, loadFactor: 1.25, slack: 2 })!.replicaId).not.toBe(first.replicaId);
    // the slack is counted from the least loaded replica, not from nothing
    const all = (url: string) => (url === first.url ? 12 : 10);
    expect(byPrefix(replicas, all, { key, loadFactor: 1, slack: 2 })!.replicaId).toBe(first.replicaId);
    expect(byPrefix(replicas, all, { key, loadFactor: 1, slack: 1 })!.replicaId).not.toBe(first.replicaId);
  });
});

describe("choose", () => {
  const o = { quarantined: () => false, random: () => 0.5 };
  it("keeps a session's replica over the prefix's", () => {
    const prefix = { key: 12345, loadFactor: 1.25, slack: 0 };
    const byKey = choose(replicas, idle, { ...o, prefix })!;
    const sessions = Array.from({ length: 50 }, (_, i) => `s${i}`);
    const other = sessions.find((s) => choose(replicas, idle, { ...o, session: s })!.url !== byKey.url)!;
    expect(choose(replicas, idle, { ...o, session: other, prefix })!.url).not.toBe(byKey.url);
  });
});

describe("routingOf", () => {
  it("defaults to prefix with the documented knobs, and keeps p2c when asked", () => {
    expect(routingOf({})).toEqual({
      policy: "prefix",
      blockChars: 64,
      keyBlocks: 32,
      keyOn: "conversation",
      loadFactor: 1.25,
      slack: 0,
      queueFactor: 4,
    });
    expect(routingOf({ routing: "prefix", prefixRouting: { keyBlocks: 8 } })).toMatchObject({ keyBlocks: 8 });
    expect(routingOf({ routing: "p2c" })).toEqual({ policy: "p2c" });
  });
});
