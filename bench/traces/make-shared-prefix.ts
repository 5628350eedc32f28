// Makes a shared-prefix request trace in the Mooncake format (bench/trace.ts), seeded and deterministic: the same flags
// give the same bytes. The workload is the one inference-perf's `shared_prefix` data generator sends (kubernetes-sigs/
// inference-perf), which llm-d's prefix-cache routing benchmarks use with 150 groups of 5 prompts, a 6,000-token
// system prompt and 1,200-token questions:
// - Groups (--groups): each has its own system prompt of --system-blocks whole 512-token blocks (12, 6,144 tokens: the
//   6,000 rounded up to whole blocks, so that a block is either all system prompt or all question).
// - Prompts (--per-group a group): the group's system prompt, then a question of its own of --question tokens.
// - Order: the groups × per-group prompts are shuffled once, then sent in that order over and over (request i is
//   prompt i mod their number), as inference-perf cycles through its shuffled prompts — so after the first round every
//   request repeats a prompt sent before.
// - Arrivals: a Poisson process, timestamps scaled so the mean rate is exactly --rate requests a second.
// - Output length: --output tokens for every request (inference-perf's fixed output_len).
// Hash ids are numbered from 0 in order of first appearance, as in the published traces.
// Run: npx tsx bench/traces/make-shared-prefix.ts --out FILE [--requests N] [--rate RPS] [--groups G] [--per-group P]
//        [--system-blocks B] [--question TOKENS] [--output TOKENS] [--seed S]
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { BLOCK_TOKENS, rng, type TraceEntry, traceLine, traceStats } from "../trace.js";
import { firstSeenNumbering, flagNumber, rateScale } from "./make-common.js";

export type SharedPrefixOptions = {
  requests: number;
  rate: number;
  groups: number;
  perGroup: number;
  systemBlocks: number;
  question: number;
  output: number;
  seed: number;
};

export const SHARED_PREFIX_DEFAULTS: Omit<SharedPrefixOptions, "seed"> = {
  requests: 3000,
  rate: 5,
  groups: 150,
  perGroup: 5,
  systemBlocks: 12,
  question: 1200,
  output: 1000,
};

/** The trace, with the group each request's prompt belongs to. */
export function makeSharedPrefixTrace(o: SharedPrefixOptions): { entries: TraceEntry[]; groups: number[] } {
  const u = rng(o.seed);
  let nextId = 0;
  const fresh = () => nextId++;
  const questionBlocks = Math.ceil(o.question / BLOCK_TOKENS);
  const prompts: { group: number; ids: number[] }[] = [];
  for (let g = 0; g < o.groups; g++) {
    const system = Array.from({ length: o.systemBlocks }, fresh);
    for (let p = 0; p < o.perGroup; p++)
      prompts.push({ group: g, ids: [...system, ...Array.from({ length: questionBlocks }, fresh)] });
  }
  // Fisher–Yates, once
  for (let i = prompts.length - 1; i > 0; i--) {
    const j = Math.floor(u() * (i + 1));
    [prompts[i], prompts[j]] = [prompts[j]!, prompts[i]!];
  }
  const times: number[] = [];
  for (let i = 0, t = 0; i < o.requests; i++, t += -Math.log(1 - u())) times.push(t);
  const span = times.at(-1) ?? 0;
  const scale = rateScale(o.requests, span, o.rate);
  const number = firstSeenNumbering();
  const picked = times.map((_, i) => prompts[i % prompts.length]!);
  const entries = picked.map((p, i) => ({
    timestamp: Math.round(times[i]! * scale),
    input_length: o.systemBlocks * BLOCK_TOKENS + o.question,
    output_length: o.output,
    hash_ids: p.ids.map(number),
  }));
  return { entries, groups: picked.map((p) => p.group) };
}

/** The command line, checked (a bad flag exits 2 with a message). */
function options(): SharedPrefixOptions & { out: string } {
  const { values: v } = parseArgs({
    options: {
      out: { type: "string" },
      requests: { type: "string" },
      rate: { type: "string" },
      groups: { type: "string" },
      "per-group": { type: "string" },
      "system-blocks": { type: "string" },
      question: { type: "string" },
      output: { type: "string" },
      seed: { type: "string" },
    },
  });
  const num = (flag: keyof typeof v, dflt: number, whole: boolean, min: number) =>
    flagNumber(flag, v[flag], dflt, whole, min);
  if (!v.out) throw new Error("--out FILE is required");
  const d = SHARED_PREFIX_DEFAULTS;
  return {
    out: v.out,
    requests: num("requests", d.requests, true, 1),
    rate: num("rate", d.rate, false, 0.001),
    groups: num("groups", d.groups, true, 1),
    perGroup: num("per-group", d.perGroup, true, 1),
    systemBlocks: num("system-blocks", d.systemBlocks, true, 0),
    question: num("question", d.question, true, 1),
    output: num("output", d.output, true, 1),
    seed: num("seed", 1, true, 0),
  };
}

/** Writes the trace and prints its figures, the summary line last. */
function main() {
  let o: ReturnType<typeof options>;
  try {
    o = options();
  } catch (e) {
    console.error(`bench/traces/make-shared-prefix.ts: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(2);
  }
  const { entries } = makeSharedPrefixTrace(o);
  writeFileSync(o.out, entries.map((e) => `${traceLine(e)}\n`).join(""));
  const st = traceStats(entries);
  const f = (x: number, d = 0) => x.toFixed(d);
  console.log(
    `trace: out=${o.out} requests=${st.requests} groups=${o.groups} prompts=${o.groups * o.perGroup} ` +
      `input=${f(st.meanInput)} output=${f(st.meanOutput)} duration_s=${f(st.durationS, 1)} rate=${f(st.rate, 2)} ` +
      `unique_blocks=${st.uniqueBlocks} ideal_cache_hit=${f(st.idealCacheHit, 3)}`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
