import { describe, expect, it } from "vitest";
import { byPrefix } from "../../api/router/balancer.js";
import { prefixPick } from "../../api/router/prefix.js";
import { ownChars } from "../../api/router/prompt-text.js";
import { routingOf } from "../../api/router/routing.js";
import type { Endpoint, Routing } from "../../api/router/types.js";

const CHAT = "/v1/chat/completions";
const SYSTEM = "You are a careful assistant for the ACME tenant. ".repeat(40);
const defaults = routingOf({}) as Extract<Routing, { policy: "prefix" }>;
/** A conversation under SYSTEM: its first user message, then `turns` more user/assistant exchanges of `turnChars`. */
const conversation = (turns: number, turnChars = 1000) => ({
  messages: [
    { role: "system", content: SYSTEM },
    { role: "user", content: "Help me plan a migration of our billing system." },
    ...Array.from({ length: turns }, (_, i) => [
      { role: "assistant", content: "a".repeat(turnChars - 10) },
      { role: "user", content: `question ${i}`.padEnd(10) },
    ]).flat(),
  ],
});

describe("ownChars", () => {
  it("counts a conversation's messages from its first user message, not its system part", () => {
    const body = conversation(3);
    expect(ownChars(CHAT, body)).toBe("Help me plan a migration of our billing system.".length + 3 * 1000);
    // text parts count as their text, other parts nothing
    const parts = {
      messages: [
        { role: "developer", content: SYSTEM },
        { role: "user", content: [{ type: "text", text: "abc" }, { type: "image_url" }, "de"] },
      ],
    };
    expect(ownChars(CHAT, parts)).toBe(5);
  });

  it("counts the whole prompt where there is no system part, and a response's or completion's own input", () => {
    expect(ownChars(CHAT, { messages: [{ role: "user", content: "x".repeat(500) }] })).toBe(500);
    expect(ownChars(CHAT, { messages: [{ role: "assistant", content: "x".repeat(7) }] })).toBe(7);
    expect(ownChars("/v1/responses", { instructions: SYSTEM, input: "y".repeat(300) })).toBe(300);
    expect(ownChars("/v1/responses", { input: [{ role: "user", content: "hi" }] })).toBe(2);
    expect(ownChars("/v1/completions", { prompt: "z".repeat(40) })).toBe(40);
    // a response's function calls and their outputs count their arguments and output
    const input = [
      { role: "user", content: "u".repeat(10) },
      { type: "function_call", call_id: "1", name: "search", arguments: '{"q":1}' },
      { type: "function_call_output", call_id: "1", output: "o".repeat(300) },
    ];
    expect(ownChars("/v1/responses", { instructions: SYSTEM, input })).toBe(10 + 7 + 300);
    expect(ownChars("/v1/completions", { prompt: ["z".repeat(40), "w"] })).toBe(40);
    // token ids count as about four characters each, alone or the first of a batch
    expect(ownChars("/v1/completions", { prompt: [1, 2, 3] })).toBe(12);
    expect(ownChars("/v1/completions", { prompt: [[1, 2], [3]] })).toBe(8);
    expect(ownChars("/v1/embeddings", { input: "x" })).toBe(0);
    // keyed on the whole prompt, the system part and a response's instructions count too
    expect(ownChars(CHAT, conversation(0), "prompt")).toBe(SYSTEM.length + ownChars(CHAT, conversation(0)));
    expect(ownChars("/v1/responses", { instructions: SYSTEM, input: "y".repeat(300) }, "prompt")).toBe(
      SYSTEM.length + 300,
    );
  });
});

describe("prefixPick", () => {
  it("gives the request's own characters and the model's queue factor for its bound", () => {
    const r = { ...defaults, slack: 1, queueFactor: 2.5 };
    const pick = prefixPick(CHAT, conversation(3), r)!;
    expect(pick).toMatchObject({ slack: 1, queueFactor: 2.5, own: ownChars(CHAT, conversation(3)) });
    // every turn of the conversation keeps the one key
    expect(new Set([0, 1, 5].map((t) => prefixPick(CHAT, conversation(t), r)!.key)).size).toBe(1);
    expect(prefixPick("/v1/embeddings", { input: "x" }, r)).toBeUndefined();
  });

  it("by default keeps a long conversation on its replica while its queue is short beside its own text", () => {
    const ep = (id: string): Endpoint => ({ replicaId: id, deployment: "d", model: "m", url: `http://${id}:1` });
    const replicas = ["r1", "r2", "r3", "r4"].map(ep);
    // 30 turns of 1,000 characters: ~30,000 characters of its own
    const long = prefixPick(CHAT, conversation(30), defaults)!;
    const mine = byPrefix(replicas, () => 0, long)!;
    // three requests outstanding on the conversation's replica, none elsewhere: past the load factor's bound
    const busy = (url: string) => (url === mine.url ? 3 : 0);
    // their prompts not yet begun there: 60,000 characters, under 4 × its own
    const queue = (chars: number) => (url: string) => (url === mine.url ? chars : 0);
    expect(byPrefix(replicas, busy, long, queue(60_000))!.url).toBe(mine.url);
    // a first turn with the same key (a few dozen characters of its own) goes to the next replica in the key's order
    const first = prefixPick(CHAT, conversation(0), defaults)!;
    expect(first.key).toBe(long.key);
    expect(byPrefix(replicas, busy, first, queue(60_000))!.url).not.toBe(mine.url);
    // the long one spills once the queue ahead of it passes 4 × its own text, or once the prompts there have begun
    // and only the count bound is left
    expect(byPrefix(replicas, busy, long, queue(4 * long.own! + 1))!.url).not.toBe(mine.url);
    expect(byPrefix(replicas, busy, long, queue(0))!.url).toBe(mine.url);
    expect(byPrefix(replicas, busy, { ...long, queueFactor: 0 }, queue(0))!.url).not.toBe(mine.url);
  });
});
