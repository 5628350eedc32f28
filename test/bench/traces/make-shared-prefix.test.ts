import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BLOCK_TOKENS, readTrace, systemBlocks, traceLine, traceStats } from "../../../bench/trace.js";
import { makeSharedPrefixTrace, SHARED_PREFIX_DEFAULTS } from "../../../bench/traces/make-shared-prefix.js";

const OPTS = { requests: 700, rate: 4, groups: 20, perGroup: 3, systemBlocks: 5, question: 700, output: 64, seed: 3 };
const { entries, groups } = makeSharedPrefixTrace(OPTS);
const PROMPTS = OPTS.groups * OPTS.perGroup;

describe("makeSharedPrefixTrace", () => {
  it("is deterministic: the same options give the same trace, another seed another", () => {
    expect(makeSharedPrefixTrace(OPTS).entries).toEqual(entries);
    expect(makeSharedPrefixTrace({ ...OPTS, seed: 4 }).entries).not.toEqual(entries);
  });

  it("writes valid trace lines: as many as asked, from time 0, at the asked mean rate, of the asked lengths", () => {
    const back = readTrace(entries.map(traceLine).join("\n"));
    expect(back).toEqual(entries);
    expect(back).toHaveLength(OPTS.requests);
    expect(back[0]!.timestamp).toBe(0);
    expect(traceStats(back).rate).toBeCloseTo(OPTS.rate, 2);
    // Poisson arrivals: exponential gaps, whose spread is about their mean (evenly spaced ones would have none)
    const gaps = back.slice(1).map((e, i) => e.timestamp - back[i]!.timestamp);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
    expect(sd / mean).toBeGreaterThan(0.8);
    expect(sd / mean).toBeLessThan(1.2);
    for (const e of back) {
      expect(e.input_length).toBe(OPTS.systemBlocks * BLOCK_TOKENS + OPTS.question);
      expect(e.output_length).toBe(OPTS.output);
    }
  });

  it("numbers hash ids from 0 in order of first appearance", () => {
    let next = 0;
    for (const id of entries.flatMap((e) => e.hash_ids)) if (id >= next) expect(id).toBe(next++);
  });

  it("starts each prompt with its group's system blocks, then a question of its own", () => {
    const system = new Map<number, number[]>();
    const questions = new Map<number, number>();
    entries.forEach((e, i) => {
      const head = e.hash_ids.slice(0, OPTS.systemBlocks);
      const own = e.hash_ids.slice(OPTS.systemBlocks);
      expect(system.get(groups[i]!) ?? head).toEqual(head);
      system.set(groups[i]!, head);
      expect(own).toHaveLength(Math.ceil(OPTS.question / BLOCK_TOKENS));
      // a question's blocks belong to one prompt: only its own repeats send them again
      for (const id of own) expect(questions.get(id) ?? i % PROMPTS).toBe(i % PROMPTS);
      for (const id of own) questions.set(id, i % PROMPTS);
    });
    expect(system.size).toBe(OPTS.groups);
    const heads = [...system.values()].flat();
    expect(new Set(heads).size).toBe(heads.length);
    // as a chat replay sends it: the group's system blocks as the system message
    const sys = systemBlocks(entries);
    for (const e of entries) expect(sys.get(e.hash_ids[0]!)).toBe(OPTS.systemBlocks);
  });

  it("sends the shuffled prompts over and over: request i and i + groups × per-group are the same prompt", () => {
    const distinct = new Set(entries.map((e) => e.hash_ids.join(",")));
    expect(distinct.size).toBe(PROMPTS);
    for (let i = PROMPTS; i < entries.length; i++) expect(entries[i]!.hash_ids).toEqual(entries[i - PROMPTS]!.hash_ids);
    // shuffled, not group by group
    expect(groups.slice(0, OPTS.perGroup)).not.toEqual(Array(OPTS.perGroup).fill(groups[0]));
    // after the first round everything was sent before; in it, every prompt but its group's first has the system part
    const firstRound =
      (PROMPTS * OPTS.systemBlocks * BLOCK_TOKENS - OPTS.groups * OPTS.systemBlocks * BLOCK_TOKENS) /
      (PROMPTS * entries[0]!.input_length);
    expect(traceStats(entries.slice(0, PROMPTS)).idealCacheHit).toBeCloseTo(firstRound, 6);
    const input = entries[0]!.input_length;
    const whole = (firstRound * PROMPTS * input + (entries.length - PROMPTS) * input) / (entries.length * input);
    expect(traceStats(entries).idealCacheHit).toBeCloseTo(whole, 9);
  });
});

describe("bench/traces/shared-prefix.jsonl", () => {
  it("is what the command in bench/traces/README.md makes", () => {
    const file = new URL("../../../bench/traces/shared-prefix.jsonl", import.meta.url);
    const shipped = readTrace(readFileSync(file, "utf8"));
    expect(shipped).toEqual(makeSharedPrefixTrace({ ...SHARED_PREFIX_DEFAULTS, seed: 1 }).entries);
  });
});
