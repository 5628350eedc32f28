import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wordCount } from "../../agent/sim/mock-openai.js";
import {
  BLOCK_TOKENS,
  blockWords,
  messagesOf,
  promptOf,
  readTrace,
  systemBlocks,
  type TraceEntry,
  type Turn,
  traceLine,
  traceStats,
  turnsOf,
} from "../../bench/trace.js";

const entry = (input_length: number, hash_ids: number[], timestamp = 0, output_length = 10): TraceEntry => ({
  timestamp,
  input_length,
  output_length,
  hash_ids,
});
const words = (e: TraceEntry) => promptOf(e).split(" ");

describe("blockWords", () => {
  it("gives the same 512 words for the same id, every time", () => {
    for (const id of [0, 1, 17, 170, 65_535, 2 ** 40]) {
      const a = blockWords(id);
      expect(a).toHaveLength(BLOCK_TOKENS);
      expect(blockWords(id)).toEqual(a);
      expect(a[0]).toBe(`[${id}]`);
      expect(a.every((w) => /^\S+$/.test(w))).toBe(true);
    }
  });

  it("starts different ids with different words, and no block's text starts another's", () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), (a, b) => {
        fc.pre(a !== b);
        const [x, y] = [blockWords(a), blockWords(b)];
        expect(x[0]).not.toBe(y[0]);
        expect(x.join(" ").startsWith(y[0]!)).toBe(false);
      }),
    );
  });

  it("draws varied words, so two blocks differ all along, not only in the first word", () => {
    const [x, y] = [blockWords(1), blockWords(2)];
    expect(new Set(x).size).toBeGreaterThan(150);
    expect(x.filter((w, i) => w === y[i]).length).toBeLessThan(20);
  });
});

describe("promptOf", () => {
  it("is the blocks' words in order, the last block cut to what input_length leaves", () => {
    const w = words(entry(600, [7, 9]));
    expect(w).toHaveLength(600);
    expect(w.slice(0, 512)).toEqual(blockWords(7));
    expect(w.slice(512)).toEqual(blockWords(9).slice(0, 88));
    expect(words(entry(1, [3]))).toEqual(["[3]"]);
    expect(words(entry(1024, [3, 4]))).toEqual([...blockWords(3), ...blockWords(4)]);
  });

  it("has as many words as input_length, which is what the mock engine counts as prompt tokens", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.nat(1000), (n, first) => {
        const e = entry(
          n,
          Array.from({ length: Math.ceil(n / BLOCK_TOKENS) }, (_, i) => first + i),
        );
        expect(wordCount(promptOf(e))).toBe(n);
        expect(wordCount(messagesOf(e))).toBe(n);
      }),
      { numRuns: 50 },
    );
  });

  it("shares exactly the prefix the ids share", () => {
    const a = words(entry(1500, [0, 1, 2]));
    const b = words(entry(1400, [0, 1, 5]));
    const same = a.findIndex((w, i) => w !== b[i]);
    expect(same).toBe(2 * BLOCK_TOKENS);
    expect(words(entry(1500, [4, 1, 2]))[0]).not.toBe(a[0]);
  });

  it("finds each request's system blocks: what every request starting with the same block shares", () => {
    const trace = [
      entry(1600, [0, 1, 2, 3]), // tenant 0, conversation a
      entry(1300, [0, 1, 4]), // tenant 0, conversation b
      entry(2100, [0, 1, 2, 3, 5]), // conversation a, next turn
      entry(700, [9, 10]), // a one-off
    ];
    const system = systemBlocks(trace);
    expect(system.get(0)).toBe(2);
    expect(system.get(9)).toBe(0);
  });
});

describe("turnsOf and messagesOf", () => {
  /** The roles of an entry's messages and each one's length in words. */
  const shape = (e: TraceEntry, turns: Turn[]) => messagesOf(e, turns).map((m) => `${m.role} ${wordCount(m.content)}`);

  it("sends a request that starts nothing else as its system blocks and one user message, or one user message", () => {
    const trace = [
      entry(1200, [1, 2, 3]), // tenant 1's first request
      entry(1100, [1, 2, 4]), // tenant 1's second: the two share blocks 1 and 2
      entry(900, [7, 8]), // a one-off
      entry(1024, [1, 2]), // a request of tenant 1 whose prompt is all system part
    ];
    const turns = turnsOf(trace);
    expect(shape(trace[0]!, turns[0]!)).toEqual(["system 1024", "user 176"]);
    expect(shape(trace[2]!, turns[2]!)).toEqual(["user 900"]);
    expect(shape(trace[3]!, turns[3]!)).toEqual(["user 1024"]);
    // without turns: the whole prompt as one user message
    expect(messagesOf(trace[0]!)).toEqual([{ role: "user", content: promptOf(trace[0]!) }]);
  });

  it("sends a conversation's next turn as the turn before, its reply and a new user message", () => {
    const trace = [
      entry(1600, [0, 1, 2, 3], 0, 200), // conversation a, turn 1: system [0, 1], full blocks [0, 1, 2]
      entry(1300, [0, 1, 8]), // conversation b: shares only the system part, so goes on from nothing
      entry(2100, [0, 1, 2, 4, 5], 5, 300), // a, turn 2: turn 1's full blocks, then new ones
      entry(2600, [0, 1, 2, 4, 6, 7], 9), // a, turn 3: goes on from turn 2, the latest that it starts with
      entry(1700, [0, 1, 2, 9]), // turn 1's blocks but no longer than its prompt and reply: not a next turn
    ];
    const turns = turnsOf(trace);
    expect(shape(trace[1]!, turns[1]!)).toEqual(["system 1024", "user 276"]);
    expect(turns[2]).toEqual([
      { role: "system", from: 0 },
      { role: "user", from: 1024 },
      { role: "assistant", from: 1600 },
      { role: "user", from: 1800 },
    ]);
    expect(shape(trace[3]!, turns[3]!)).toEqual([
      "system 1024",
      "user 576",
      "assistant 200",
      "user 300",
      "assistant 300",
      "user 200",
    ]);
    expect(shape(trace[4]!, turns[4]!)).toEqual(["system 1024", "user 676"]);
    // whatever the split, the words in order are the prompt's
    trace.forEach((e, i) => {
      expect(
        messagesOf(e, turns[i]!)
          .map((m) => m.content)
          .join(" "),
      ).toBe(promptOf(e));
    });
  });
});

describe("readTrace", () => {
  const good = [
    '{"timestamp": 0, "input_length": 6755, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}',
    '{"timestamp": 0, "input_length": 2287, "output_length": 316, "hash_ids": [0, 42, 43, 44, 45]}',
    "",
    '{"timestamp": 3052, "input_length": 512, "output_length": 1, "hash_ids": [46], "session_id": "s1"}',
  ].join("\n");

  it("reads the published traces' lines, skipping blank ones and dropping fields it does not use", () => {
    const es = readTrace(`${good}\n`);
    expect(es).toHaveLength(3);
    expect(es[2]).toEqual({ timestamp: 3052, input_length: 512, output_length: 1, hash_ids: [46] });
    expect(readTrace(good, { limit: 2 })).toEqual(es.slice(0, 2));
    expect(readTrace(es.map(traceLine).join("\n"))).toEqual(es);
  });

  it.each([
    ["not JSON", "{timestamp: 0}", /trace line 5: not JSON/],
    ["a missing field", '{"timestamp": 0, "input_length": 10, "hash_ids": [1]}', /trace line 5: output_length: /],
    [
      "a negative id",
      '{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [-1]}',
      /line 5: hash_ids\.0/,
    ],
    ["a fraction", '{"timestamp": 1.5, "input_length": 10, "output_length": 1, "hash_ids": [1]}', /line 5: timestamp/],
    ["an empty prompt", '{"timestamp": 9000, "input_length": 0, "output_length": 1, "hash_ids": []}', /input_length/],
    [
      "too few ids",
      '{"timestamp": 9000, "input_length": 1025, "output_length": 1, "hash_ids": [1, 2]}',
      /trace line 5: input_length 1025 is 3 block\(s\) of 512 tokens, but hash_ids has 2/,
    ],
    [
      "too many ids",
      '{"timestamp": 9000, "input_length": 512, "output_length": 1, "hash_ids": [1, 2]}',
      /line 5: input_length 512 is 1 block\(s\)/,
    ],
    [
      "time going back",
      '{"timestamp": 3000, "input_length": 10, "output_length": 1, "hash_ids": [1]}',
      /trace line 5: timestamp 3000 is before the previous request's 3052/,
    ],
    ["an array", "[1, 2]", /trace line 5: line: /],
  ])("rejects %s with the line's number", (_, line, message) => {
    expect(() => readTrace(`${good}\n${line}\n`)).toThrow(message);
  });

  it("does not read past the limit, so a bad line after it is not reached", () => {
    expect(readTrace(`${good}\nnot json`, { limit: 3 })).toHaveLength(3);
  });
});

describe("traceStats", () => {
  it("counts the prompt tokens an infinite prefix cache holds: leading blocks seen before, in order", () => {
    const st = traceStats([
      entry(1024, [0, 1], 0, 4),
      entry(1300, [0, 1, 2], 1000, 6), // 1024 cached
      entry(1200, [0, 3, 4], 2000), // 512 cached
      entry(1300, [9, 1, 2], 3000), // same later ids behind a new first block: nothing cached
      entry(100, [0], 4000), // block 0 cut short: the 100 tokens are cached
    ]);
    expect(st.idealCacheHit).toBeCloseTo((1024 + 512 + 100) / (1024 + 1300 + 1200 + 1300 + 100));
    expect(st).toMatchObject({ requests: 5, maxInput: 1300, p50Input: 1200, durationS: 4, rate: 1, uniqueBlocks: 8 });
    expect(traceStats([])).toMatchObject({ requests: 0, idealCacheHit: 0, rate: 0 });
  });
});
