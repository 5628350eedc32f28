// Makes a synthetic shared-prefix request trace in the Mooncake format (bench/trace.ts), seeded and deterministic: the
// same flags give the same bytes. The workload it models:
// - Tenants (--tenants): each has its own system prompt and tool schema, 2–8 whole blocks of 512 tokens that every one
//   of its requests starts with. Traffic is Zipf-skewed over tenants (the i-th busiest gets 1/i of the busiest's share),
//   so a few tenants are hot and most are not.
// - Conversations: a tenant's session of chat turns. Turn 1 is the prefix plus a first user message (mostly a few
//   hundred tokens, one in five a pasted document of 2k–9k). Turn N+1 is turn N's whole prompt plus the assistant's
//   answer (turn N's output_length tokens) plus a new user message. Its hash_ids are turn N's full-block ids followed
//   by new ones: turn N's partial last block, if any, gets a new id when it fills up, since an id names a block's exact
//   content (in Mooncake's conversation_trace.jsonl no partial last block's id ever reappears as a full block). A
//   conversation goes on with probability 0.75 a turn, to at most 16 turns, and ends before its prompt would pass 16k.
// - One-off requests (one session in ten, some 3% of requests): no tenant prefix, 100–1500 tokens, nothing shared.
// - Arrivals: sessions start as a Poisson process; a conversation's next turn comes after its answer is generated
//   (20 ms a token) and the user's think time (log-normal, median 12 s). Sessions start from 5 minutes before the trace
//   so it opens in steady state (those earlier turns are dropped; later turns reuse their blocks), and timestamps are
//   scaled by a factor near 1 so the mean rate is exactly --rate requests a second.
// - Output lengths: log-normal, median 180 tokens, clipped to 50–500.
// Hash ids are numbered from 0 in order of first appearance, as in the published traces.
// Run: npx tsx bench/traces/make-trace.ts --out FILE [--requests N] [--rate RPS] [--tenants T] [--seed S]
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { BLOCK_TOKENS, rng, type TraceEntry, traceLine, traceStats } from "../trace.js";
import { firstSeenNumbering, flagNumber, rateScale } from "./make-common.js";

export type TraceOptions = { requests: number; rate: number; tenants: number; seed: number };

const WARMUP_MS = 300_000;
const ONE_OFF_SHARE = 0.1;
const GO_ON = 0.75;
const MAX_TURNS = 16;
const MAX_INPUT = 16_384;
const MEAN_TURNS = 3.2; // a first guess for the session start rate; the final scaling makes the rate exact
const MS_PER_TOKEN = 20;

/** Samplers over one seeded PRNG. */
function samplers(seed: number) {
  const u = rng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
  const clip = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(x)));
  return {
    u,
    int: (lo: number, hi: number) => lo + Math.floor(u() * (hi - lo + 1)),
    exp: (mean: number) => -mean * Math.log(1 - u()),
    logNormal: (median: number, sigma: number, lo: number, hi: number) =>
      clip(median * Math.exp(sigma * normal()), lo, hi),
  };
}

type Raw = { t: number; session: number; tenant: number; input: number; output: number; ids: number[] };

/**
 * A trace of `requests` requests, with the session (conversation or one-off request) and the tenant (-1 for one-offs)
 * each one belongs to.
 */
export function makeTrace(o: TraceOptions): { entries: TraceEntry[]; sessions: number[]; tenants: number[] } {
  const s = samplers(o.seed);
  let nextId = 0;
  const fresh = () => nextId++;
  const prefixes = Array.from({ length: o.tenants }, () => Array.from({ length: s.int(2, 8) }, fresh));
  const weights = prefixes.map((_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const pickTenant = () => {
    let x = s.u() * total;
    for (let i = 0; i < weights.length; i++) if ((x -= weights[i]!) < 0) return i;
    return weights.length - 1;
  };
  const output = () => s.logNormal(180, 0.5, 50, 500);

  const raw: Raw[] = [];
  const startRate = o.rate / (ONE_OFF_SHARE + (1 - ONE_OFF_SHARE) * MEAN_TURNS) / 1000; // sessions a ms
  let t = -WARMUP_MS;
  for (let session = 0; ; session++) {
    t += s.exp(1 / startRate);
    if (session % 64 === 0 && raw.filter((r) => r.t >= 0 && r.t < t).length >= o.requests) break;
    if (s.u() < ONE_OFF_SHARE) {
      const input = s.logNormal(400, 0.6, 100, 1500);
      const ids = Array.from({ length: Math.ceil(input / BLOCK_TOKENS) }, fresh);
      raw.push({ t, session, tenant: -1, input, output: output(), ids });
      continue;
    }
    const tenant = pickTenant();
    const full = [...prefixes[tenant]!];
    let input = full.length * BLOCK_TOKENS + (s.u() < 0.2 ? s.int(2000, 9000) : s.logNormal(250, 0.8, 20, 3000));
    let at = t;
    for (let turn = 0; turn < MAX_TURNS && input <= MAX_INPUT; turn++) {
      const whole = Math.floor(input / BLOCK_TOKENS);
      while (full.length < whole) full.push(fresh());
      const ids = input % BLOCK_TOKENS ? [...full.slice(0, whole), fresh()] : full.slice(0, whole);
      const out = output();
      raw.push({ t: at, session, tenant, input, output: out, ids });
      if (s.u() >= GO_ON) break;
      at += out * MS_PER_TOKEN + s.logNormal(12_000, 0.7, 1000, 120_000);
      input += out + (s.u() < 0.1 ? s.int(1000, 4000) : s.logNormal(80, 0.9, 5, 1500));
    }
  }

  const kept = raw
    .filter((r) => r.t >= 0)
    .sort((a, b) => a.t - b.t || a.session - b.session)
    .slice(0, o.requests);
  const t0 = kept[0]?.t ?? 0;
  const span = (kept.at(-1)?.t ?? t0) - t0;
  const scale = rateScale(kept.length, span, o.rate);
  const number = firstSeenNumbering();
  const entries = kept.map((r) => ({
    timestamp: Math.round((r.t - t0) * scale),
    input_length: r.input,
    output_length: r.output,
    hash_ids: r.ids.map(number),
  }));
  return { entries, sessions: kept.map((r) => r.session), tenants: kept.map((r) => r.tenant) };
}

/** The command line, checked (a bad flag exits 2 with a message). */
function options() {
  const { values: v } = parseArgs({
    options: {
      out: { type: "string" },
      requests: { type: "string" },
      rate: { type: "string" },
      tenants: { type: "string" },
      seed: { type: "string" },
    },
  });
  if (!v.out) throw new Error("--out FILE is required");
  return {
    out: v.out,
    requests: flagNumber("requests", v.requests, 3000, true, 1),
    rate: flagNumber("rate", v.rate, 10, false, 0.001),
    tenants: flagNumber("tenants", v.tenants, 12, true, 1),
    seed: flagNumber("seed", v.seed, 1, true, 0),
  };
}

/** Writes the trace and prints its figures, the summary line last. */
function main() {
  let o: ReturnType<typeof options>;
  try {
    o = options();
  } catch (e) {
    console.error(`bench/traces/make-trace.ts: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(2);
  }
  const { entries, sessions, tenants } = makeTrace(o);
  writeFileSync(o.out, entries.map((e) => `${traceLine(e)}\n`).join(""));
  const st = traceStats(entries);
  const f = (x: number, d = 0) => x.toFixed(d);
  console.log(
    `trace: out=${o.out} requests=${st.requests} tenants=${new Set(tenants.filter((t) => t >= 0)).size} sessions=${new Set(sessions).size} ` +
      `mean_input=${f(st.meanInput)} p50_input=${st.p50Input} max_input=${st.maxInput} mean_output=${f(st.meanOutput)} ` +
      `duration_s=${f(st.durationS, 1)} rate=${f(st.rate, 2)} unique_blocks=${st.uniqueBlocks} ` +
      `ideal_cache_hit=${f(st.idealCacheHit, 3)}`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
