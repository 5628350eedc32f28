import { describe, expect, it } from "vitest";
import { promptWords, wordCount } from "../../agent/sim/mock-openai.js";
import {
  blockHashes,
  createPrefixCache,
  DEFAULT_BLOCK_TOKENS,
  DEFAULT_CAPACITY_TOKENS,
} from "../../agent/sim/prefix-cache.js";

/** `n` distinct tokens `${tag}0 ${tag}1 …`. */
const toks = (n: number, tag = "t") => Array.from({ length: n }, (_, i) => `${tag}${i}`);

describe("promptWords", () => {
  it.each([
    ["a string", "  one two\tthree\n "],
    ["token ids", [101, 7, 7]],
    [
      "chat messages with parts",
      [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "hi there" }] },
      ],
    ],
    ["a prompt array", ["one", "two three"]],
    ["nothing", ""],
  ])("gives as many tokens as usage counts: %s", (_, v) => {
    expect(promptWords(v)).toHaveLength(wordCount(v));
  });

  it("keeps the words in order", () => {
    expect(promptWords([{ content: "a b" }, { content: [{ text: "c" }, 5] }])).toEqual(["a", "b", "c", "5"]);
  });
});

describe("blockHashes", () => {
  it("names each full block by its tokens and every block before it", () => {
    const a = blockHashes(toks(10), 4);
    expect(a).toHaveLength(2);
    expect(blockHashes(toks(10), 4)).toEqual(a);
    const changedFirst = toks(10);
    changedFirst[0] = "other";
    const b = blockHashes(changedFirst, 4);
    expect(b[0]).not.toBe(a[0]);
    expect(b[1]).not.toBe(a[1]);
    // the same four tokens hash differently after a different block
    const repeated = blockHashes(["x", "y", "x", "y"], 2);
    expect(repeated[0]).not.toBe(repeated[1]);
  });
});

describe("createPrefixCache", () => {
  it("defaults to vLLM's 16-token blocks and 200,000 tokens", () => {
    const c = createPrefixCache();
    expect([c.blockTokens, c.capacityBlocks]).toEqual([DEFAULT_BLOCK_TOKENS, DEFAULT_CAPACITY_TOKENS / 16]);
    expect(DEFAULT_CAPACITY_TOKENS).toBe(200_000);
  });

  it.each([
    ["a repeated prompt hits its full blocks short of the last token", toks(10), toks(10), 8],
    ["a block-aligned repeat recomputes its whole last block", toks(8), toks(8), 4],
    ["an extended prompt hits the earlier prompt's full blocks", toks(8), toks(13), 8],
    ["a prefix shared inside a block counts only whole blocks", toks(10), [...toks(6), "u6", "u7", "u8", "u9"], 4],
    ["a changed first token misses everything", toks(12), ["x", ...toks(12).slice(1)], 0],
    ["a change in the third block keeps the first two", toks(12), [...toks(9), "x", "t10", "t11", "t12"], 8],
    ["a prompt shorter than a block never hits", toks(3), toks(3), 0],
    ["an empty prompt never hits", [], [], 0],
  ])("%s", (_, first: string[], second: string[], cached: number) => {
    const c = createPrefixCache({ capacityTokens: 1_000, blockTokens: 4 });
    expect(c.lookupAndInsert(first).cachedTokens).toBe(0);
    expect(c.lookupAndInsert(second)).toEqual({ queriedTokens: second.length, cachedTokens: cached });
  });

  it("caches the computed reply too, so the next turn of a conversation hits into it", () => {
    const c = createPrefixCache({ capacityTokens: 1_000, blockTokens: 4 });
    const prompt = toks(6, "p");
    const reply = toks(5, "r");
    c.lookupAndInsert(prompt, reply);
    // 6 prompt + 5 reply = 11 tokens: two full blocks, the second across the turn boundary
    expect(c.lookupAndInsert([...prompt, ...reply, ...toks(3, "u")]).cachedTokens).toBe(8);
    const without = createPrefixCache({ capacityTokens: 1_000, blockTokens: 4 });
    without.lookupAndInsert(prompt);
    expect(without.lookupAndInsert([...prompt, ...reply, ...toks(3, "u")]).cachedTokens).toBe(4);
  });

  it("evicts least recently used blocks at capacity, a sequence's tail before its head", () => {
    const c = createPrefixCache({ capacityTokens: 12, blockTokens: 4 }); // 3 blocks
    const a = toks(9, "a");
    const b = toks(9, "b");
    c.lookupAndInsert(a.slice(0, 8)); // a0 a1
    c.lookupAndInsert(b.slice(0, 8)); // b0 b1: evicts a1, the least recent
    expect(c.size()).toBe(3);
    expect(c.lookupAndInsert(a).cachedTokens).toBe(4); // a0 hits, a1 is gone; a1 comes back, b1 goes
    expect(c.lookupAndInsert(b).cachedTokens).toBe(4);
    expect(c.size()).toBe(3);
  });

  it("touches the blocks it hits: a recently used prefix outlives an older one", () => {
    const c = createPrefixCache({ capacityTokens: 16, blockTokens: 4 }); // 4 blocks
    const [a, b, d] = [toks(9, "a"), toks(9, "b"), toks(9, "d")];
    c.lookupAndInsert(a.slice(0, 8));
    c.lookupAndInsert(b.slice(0, 8));
    expect(c.lookupAndInsert(a).cachedTokens).toBe(8); // a is now the most recent
    c.lookupAndInsert(d.slice(0, 8)); // evicts b's two blocks
    expect(c.lookupAndInsert(a).cachedTokens).toBe(8);
    expect(c.lookupAndInsert(b).cachedTokens).toBe(0);
  });

  it("keeps the head of a sequence longer than the whole cache", () => {
    const c = createPrefixCache({ capacityTokens: 8, blockTokens: 4 });
    c.lookupAndInsert(toks(20));
    expect(c.size()).toBe(2);
    expect(c.lookupAndInsert(toks(20)).cachedTokens).toBe(8);
  });

  it("caches nothing with less room than one block", () => {
    const c = createPrefixCache({ capacityTokens: 3, blockTokens: 4 });
    c.lookupAndInsert(toks(9));
    expect([c.size(), c.lookupAndInsert(toks(9)).cachedTokens]).toEqual([0, 0]);
  });

  it("counts queried and hit prompt tokens, as vLLM's prefix_cache_queries and prefix_cache_hits", () => {
    const c = createPrefixCache({ capacityTokens: 1_000, blockTokens: 4 });
    c.lookupAndInsert(toks(10), toks(3, "r"));
    c.lookupAndInsert(toks(10));
    c.lookupAndInsert(toks(5, "x"));
    expect(c.stats()).toEqual({ queries: 25, hits: 8 });
  });

  it.each([
    [{ blockTokens: 0 }, /blockTokens must be a positive integer/],
    [{ blockTokens: 1.5 }, /blockTokens must be a positive integer/],
    [{ capacityTokens: -1 }, /capacityTokens must be an integer from 0/],
  ])("rejects %o", (opts, message) => {
    expect(() => createPrefixCache(opts)).toThrow(message);
  });
});

describe("PrefixCache.peek", () => {
  it("finds what lookupAndInsert would, and changes nothing", () => {
    const c = createPrefixCache({ capacityTokens: 16, blockTokens: 4 });
    c.lookupAndInsert(toks(9));
    expect(c.peek(toks(13))).toBe(8);
    expect(c.peek(toks(9))).toBe(8);
    expect(c.peek(toks(12, "u"))).toBe(0);
    // peeking neither inserted the longer prompt's third block nor moved anything in the LRU order
    expect(c.size()).toBe(2);
    expect(c.stats()).toEqual({ queries: 9, hits: 0 });
    expect(c.lookupAndInsert(toks(13)).cachedTokens).toBe(8);
  });
});
