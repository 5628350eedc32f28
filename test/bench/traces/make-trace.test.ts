import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BLOCK_TOKENS, promptOf, readTrace, type TraceEntry, traceLine, traceStats } from "../../../bench/trace.js";
import { makeTrace } from "../../../bench/traces/make-trace.js";

const OPTS = { requests: 1500, rate: 10, tenants: 12, seed: 7 };
const { entries, sessions, tenants } = makeTrace(OPTS);

/** The requests of each session, in trace order. */
function bySession(es: TraceEntry[], ss: number[]): TraceEntry[][] {
  const m = new Map<number, TraceEntry[]>();
  es.forEach((e, i) => {
    const list = m.get(ss[i]!) ?? [];
    m.set(ss[i]!, [...list, e]);
  });
  return [...m.values()];
}

describe("makeTrace", () => {
  it("is deterministic: the same options give the same trace, another seed another", () => {
    expect(makeTrace(OPTS).entries).toEqual(entries);
    expect(makeTrace({ ...OPTS, seed: 8 }).entries).not.toEqual(entries);
  });

  it("writes valid trace lines: as many as asked, from time 0, at the asked mean rate", () => {
    const back = readTrace(entries.map(traceLine).join("\n"));
    expect(back).toEqual(entries);
    expect(back).toHaveLength(OPTS.requests);
    expect(back[0]!.timestamp).toBe(0);
    expect(traceStats(back).rate).toBeCloseTo(OPTS.rate, 1);
  });

  it("keeps lengths in the modelled ranges", () => {
    for (const e of entries) {
      expect(e.input_length).toBeGreaterThanOrEqual(100);
      expect(e.input_length).toBeLessThanOrEqual(16_384);
      expect(e.output_length).toBeGreaterThanOrEqual(50);
      expect(e.output_length).toBeLessThanOrEqual(500);
    }
  });

  it("numbers hash ids from 0 in order of first appearance", () => {
    let next = 0;
    for (const id of entries.flatMap((e) => e.hash_ids)) if (id >= next) expect(id).toBe(next++);
  });

  it("extends each conversation turn by turn: the previous turn's full blocks, then new ones", () => {
    let followUps = 0;
    for (const turns of bySession(entries, sessions))
      for (let i = 1; i < turns.length; i++) {
        const [prev, next] = [turns[i - 1]!, turns[i]!];
        const whole = Math.floor(prev.input_length / BLOCK_TOKENS);
        expect(next.hash_ids.slice(0, whole)).toEqual(prev.hash_ids.slice(0, whole));
        expect(next.input_length).toBeGreaterThan(prev.input_length + prev.output_length);
        expect(next.timestamp).toBeGreaterThan(prev.timestamp);
        // a partial last block is content of its own: the block it grows into is a new one
        if (prev.input_length % BLOCK_TOKENS) expect(next.hash_ids).not.toContain(prev.hash_ids.at(-1));
        followUps++;
      }
    expect(followUps).toBeGreaterThan(OPTS.requests / 3);
  });

  it("gives the follow-up's prompt text the previous turn's text up to its last full block", () => {
    const turns = bySession(entries, sessions).find((t) => t.length >= 3)!;
    const [a, b] = [promptOf(turns[1]!), promptOf(turns[2]!)];
    const shared = Math.floor(turns[1]!.input_length / BLOCK_TOKENS) * BLOCK_TOKENS;
    const cut = (s: string, n: number) => s.split(" ").slice(0, n).join(" ");
    expect(cut(b, shared)).toBe(cut(a, shared));
    expect(b.split(" ")[shared]).not.toBe(a.split(" ")[shared]);
  });

  it("starts every request of a tenant with its own 2–8 block prefix; one-off requests share nothing", () => {
    const common = new Map<number, number[]>();
    entries.forEach((e, i) => {
      const seen = common.get(tenants[i]!);
      const n = seen ? seen.findIndex((id, j) => id !== e.hash_ids[j]) : -1;
      common.set(tenants[i]!, seen ? (n < 0 ? seen : seen.slice(0, n)) : e.hash_ids);
    });
    const prefixes = [...common].filter(([t]) => t >= 0).map(([, ids]) => ids);
    expect(prefixes).toHaveLength(OPTS.tenants);
    for (const p of prefixes) expect([p.length >= 2, p.length <= 8]).toEqual([true, true]);
    expect(new Set(prefixes.map((p) => p[0])).size).toBe(OPTS.tenants);
    const uses = new Map<number, number>();
    for (const id of entries.flatMap((e) => e.hash_ids)) uses.set(id, (uses.get(id) ?? 0) + 1);
    const oneOffs = entries.filter((_, i) => tenants[i] === -1);
    expect(oneOffs.length).toBeGreaterThan(OPTS.requests * 0.01);
    for (const e of oneOffs) for (const id of e.hash_ids) expect(uses.get(id)).toBe(1);
    expect(traceStats(entries).idealCacheHit).toBeGreaterThan(0.5);
  });
});

describe("bench/traces/multi-tenant-chat.jsonl", () => {
  it("is what the command in bench/traces/README.md makes", () => {
    const file = new URL("../../../bench/traces/multi-tenant-chat.jsonl", import.meta.url);
    const shipped = readTrace(readFileSync(file, "utf8"));
    expect(shipped).toEqual(makeTrace({ requests: 3000, rate: 10, tenants: 12, seed: 1 }).entries);
  });
});
