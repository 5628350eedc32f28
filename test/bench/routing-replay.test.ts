import { describe, expect, it } from "vitest";
import { prefixKey } from "../../api/router/prefix.js";
import { routingOf } from "../../api/router/routing.js";
import { REPLAY_PATHS, replayApiOf, replayBody } from "../../bench/routing-replay.js";
import { promptOf, turnsOf } from "../../bench/trace.js";
import { makeSharedPrefixTrace } from "../../bench/traces/make-shared-prefix.js";

const { entries, groups } = makeSharedPrefixTrace({
  requests: 40,
  rate: 5,
  groups: 4,
  perGroup: 5,
  systemBlocks: 12,
  question: 1200,
  output: 100,
  seed: 1,
});
const turns = turnsOf(entries);
const words = (body: { messages?: { content: string }[]; prompt?: string }) =>
  (body.prompt ?? body.messages!.map((m) => m.content).join(" ")).split(" ");

describe("replayBody", () => {
  it("sends the trace's prompt after the namespace, as chat messages or as one completion prompt", () => {
    const e = entries[0]!;
    const chat = replayBody("chat", "run3", e, turns[0]!);
    const text = replayBody("completions", "run3", e, turns[0]!);
    expect(words(text)).toEqual(["run3", ...promptOf(e).split(" ")]);
    expect(words(chat)).toEqual(words(text));
    // the group's system prompt is the system message
    expect(chat.messages!.map((m) => m.role)).toEqual(["system", "user"]);
    expect(chat.messages![0]!.content.split(" ")).toHaveLength(1 + 12 * 512);
  });

  it("takes chat or completions and nothing else", () => {
    expect(replayApiOf(undefined)).toBe("chat");
    expect(replayApiOf("completions")).toBe("completions");
    expect(() => replayApiOf("responses")).toThrow(/--api wants chat or completions, not "responses"/);
  });
});

describe("the router's key on the shared-prefix trace", () => {
  const keys = (api: "chat" | "completions", keyOn: "conversation" | "prompt") => {
    const r = routingOf({ prefixRouting: { keyOn } });
    if (r.policy !== "prefix") throw new Error("prefix expected");
    return entries.map((e, i) => prefixKey(REPLAY_PATHS[api], replayBody(api, "run", e, turns[i]!), r));
  };
  /** How many distinct keys the requests of each group have. */
  const perGroup = (ks: (number | undefined)[]) =>
    [...new Set(groups)].map((g) => new Set(ks.filter((_, i) => groups[i] === g)).size);

  it("gives a group's prompts one key when sent as completions, and each group its own", () => {
    const ks = keys("completions", "conversation");
    expect(perGroup(ks)).toEqual([1, 1, 1, 1]);
    expect(new Set(ks).size).toBe(4);
  });

  it("sent as chat, keys each prompt apart by default and the group together with keyOn prompt", () => {
    const apart = keys("chat", "conversation");
    const together = keys("chat", "prompt");
    expect(perGroup(apart)).toEqual([5, 5, 5, 5]);
    expect(perGroup(together)).toEqual([1, 1, 1, 1]);
    expect(new Set(together).size).toBe(4);
    expect([...apart, ...together].filter((k) => k === undefined)).toEqual([]);
  });
});
