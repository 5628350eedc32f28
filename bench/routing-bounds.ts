// What routing could reach on a trace, modelled in one process (no engines, no router processes): the trace's requests
// in order, each sent by a policy to one of R replicas that each keep a prefix cache (agent/sim/prefix-cache.ts, the
// mock engine's own), the replicas' outstanding requests taken from a model of their timing (prefill of the uncached
// tokens at the prefill pace, then the reply at the decode pace; with --prefill-queue a replica prefills one request at
// a time, first come first served, as a GPU's compute is shared), as one router instance would count them.
// The policies: `p2c` and `prefix` — the router's own choice (api/router/balancer.ts, the same key and bound) — and
// three that no stateless router can run, as bounds: `session` (prefix affinity on an oracle key per conversation, from
// the generator's own session of each request: only for the shipped trace, which make-trace.ts makes again to know
// them), `precise` (the replica whose cache holds the longest prefix of the request now, among those the router's
// bound leaves open to it: a router that knows every engine's cache) and `soonest` (the replica where the request's
// first token would come soonest, knowing every cache and every replica's prefill queue: greedy, and no router sees
// that much). Last, the ideal: one cache of all replicas' capacity.
// Run: npx tsx bench/routing-bounds.ts [--trace FILE] [--limit 1200] [--speed 4] [--replicas 4] [--cache-tokens N]
//        [--slack N] [--queue-factor X] [--key-blocks N] [--key-on conversation|prompt] (absent knobs: the router's
//        defaults) [--prefill-queue] [--api chat|completions] (the requests as bench/routing.ts sends them)
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createPrefixCache } from "../agent/sim/prefix-cache.js";
import { choose } from "../api/router/balancer.js";
import { prefixPick } from "../api/router/prefix.js";
import { routingOf } from "../api/router/routing.js";
import type { Endpoint } from "../api/router/types.js";
import { ROOT } from "../test/helpers/process.js";
import { machine } from "./machine.js";
import {
  idealCache,
  p90,
  prefixKnobFlags,
  prefixRoutingOf,
  REPLAY_PATHS,
  type ReplayApi,
  replayApiFlag,
  replayApiOf,
  replayBody,
  traceOrExit,
} from "./routing-replay.js";
import { promptOf, traceLine, turnsOf } from "./trace.js";
import { makeTrace } from "./traces/make-trace.js";

const SHIPPED = join(ROOT, "bench", "traces", "multi-tenant-chat.jsonl");
const { values: v } = parseArgs({
  options: {
    trace: { type: "string", default: SHIPPED },
    limit: { type: "string", default: "1200" },
    speed: { type: "string", default: "4" },
    replicas: { type: "string", default: "4" },
    "cache-tokens": { type: "string", default: "200000" },
    "prefill-tokens-per-s": { type: "string", default: "10000" },
    "tokens-per-s": { type: "string", default: "200" },
    "max-tokens": { type: "string", default: "32" },
    ...prefixKnobFlags,
    ...replayApiFlag,
    "prefill-queue": { type: "boolean", default: false },
  },
});
const num = (flag: keyof typeof v, min = Number.MIN_VALUE) => {
  const n = Number(v[flag]);
  if (!Number.isFinite(n) || n < min) {
    console.error(`bench/routing-bounds.ts: --${flag} wants a number from ${min} up, not ${JSON.stringify(v[flag])}`);
    process.exit(2);
  }
  return n;
};
const o = {
  limit: num("limit"),
  speed: num("speed"),
  replicas: num("replicas"),
  cacheTokens: num("cache-tokens"),
  prefill: num("prefill-tokens-per-s"),
  decode: num("tokens-per-s"),
  maxTokens: num("max-tokens"),
  queue: v["prefill-queue"] === true,
};
// the router's own settings, with the knobs given
let routed: ReturnType<typeof routingOf>;
let api: ReplayApi;
try {
  routed = routingOf({ prefixRouting: prefixRoutingOf(v) });
  api = replayApiOf(v.api);
} catch (e) {
  console.error(`bench/routing-bounds.ts: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
if (routed.policy !== "prefix") throw new Error("unreachable: routingOf({}) is prefix");
const routing = routed;

// the trace, and for the shipped one the generator's own record of each request's session (its README gives the flags)
const entries = traceOrExit("bench/routing-bounds.ts", v.trace, o.limit);
const shipped = resolve(v.trace) === SHIPPED;
const made = shipped ? makeTrace({ requests: 3000, rate: 10, tenants: 12, seed: 1 }) : undefined;
if (made && entries.some((e, n) => traceLine(e) !== traceLine(made.entries[n]!))) {
  console.error("bench/routing-bounds.ts: the shipped trace is not what make-trace.ts makes with its README's flags");
  process.exit(1);
}
const sessions = made?.sessions ?? [];
// the body the replay sends (routing-replay.ts: the messages of turnsOf, or one prompt, after a namespace), and its
// words as the engine's tokens
const turns = turnsOf(entries);
const path = REPLAY_PATHS[api];
const bodies = entries.map((e, i) => replayBody(api, "run", e, turns[i]!));
const words = entries.map((e) => `run ${promptOf(e)}`.split(" "));
const replies = entries.map((e) => Math.min(e.output_length, o.maxTokens));

type Policy = "p2c" | "prefix" | "session" | "precise" | "soonest";
const mix = (x: number) => Math.imul(x + 1, 0x9e3779b1) >>> 0;

function run(policy: Policy) {
  const caches = Array.from({ length: o.replicas }, () => createPrefixCache({ capacityTokens: o.cacheTokens }));
  const pool: Endpoint[] = caches.map((_, i) => ({ url: String(i), replicaId: `bench-${i}` }) as Endpoint);
  const ends: number[][] = caches.map(() => []);
  // each replica's prompts not yet begun, as one router instance counts them: their own characters, to their first
  // token
  const begins: { at: number; chars: number }[][] = caches.map(() => []);
  const prefillFree = caches.map(() => 0);
  let prompt = 0;
  let cached = 0;
  const ttft: number[] = [];
  entries.forEach((e, n) => {
    const now = e.timestamp / o.speed;
    const inflight = (url: string) => ends[Number(url)]!.filter((t) => t > now).length;
    const queued = (url: string) => begins[Number(url)]!.reduce((sum, b) => sum + (b.at > now ? b.chars : 0), 0);
    // the bound the router holds this request to (its own text's length sets how long a queue it waits behind);
    // `session` and `precise` are held to it as the router's key is
    const byRouter = policy === "p2c" ? undefined : prefixPick(path, bodies[n]!, routing);
    let r: number;
    if (policy === "soonest") {
      // every cache and every prefill queue known: the replica where this request's first token comes soonest
      const first = (i: number) =>
        (o.queue ? Math.max(now, prefillFree[i]!) : now) +
        ((words[n]!.length - caches[i]!.peek(words[n]!)) / o.prefill) * 1000;
      r = 0;
      for (let i = 1; i < o.replicas; i++) if (first(i) < first(r)) r = i;
    } else if (policy === "precise") {
      const least = Math.min(...pool.map((p) => inflight(p.url)));
      const shortest = Math.min(...pool.map((p) => queued(p.url)));
      const wait = routing.queueFactor * (byRouter?.own ?? 0);
      const open = pool.filter(
        (p) => inflight(p.url) <= least + routing.slack || (wait > 0 && queued(p.url) - shortest <= wait),
      );
      const score = (p: Endpoint) => caches[Number(p.url)]!.peek(words[n]!) * 1000 - inflight(p.url);
      r = Number(open.reduce((a, b) => (score(b) > score(a) ? b : a)).url);
    } else {
      const prefix = byRouter && policy === "session" ? { ...byRouter, key: mix(sessions[n]!) } : byRouter;
      const pick = choose(pool, inflight, {
        quarantined: () => false,
        random: Math.random,
        ...(prefix ? { prefix, queued } : {}),
      });
      r = Number(pick!.url);
    }
    const got = caches[r]!.lookupAndInsert(words[n]!);
    prompt += words[n]!.length;
    cached += got.cachedTokens;
    const starts = o.queue ? Math.max(now, prefillFree[r]!) : now;
    prefillFree[r] = starts + ((words[n]!.length - got.cachedTokens) / o.prefill) * 1000;
    const firstMs = prefillFree[r]! - now;
    ttft.push(firstMs);
    ends[r]!.push(now + firstMs + (replies[n]! * 1000) / o.decode);
    begins[r]!.push({ at: now + firstMs, chars: byRouter?.own ?? 0 });
  });
  const sorted = [...ttft].sort((a, b) => a - b);
  return {
    hitRate: cached / prompt,
    ttftP50: sorted[Math.floor(sorted.length / 2)] ?? 0,
    ttftP90: p90(ttft),
    ttftP99: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
  };
}
console.log(`machine: ${machine()}`);
console.log(
  `trace: ${relative(ROOT, resolve(v.trace))}, ${entries.length} requests at ${o.speed}× speed; ${o.replicas} replicas of ${o.cacheTokens.toLocaleString("en")} cached tokens, prefill ${o.prefill} tokens/s${o.queue ? " one request at a time" : ""}; sent as ${api === "chat" ? "chat completions" : "completions"}; slack ${routing.slack}, queue factor ${routing.queueFactor}`,
);
const best = idealCache(words, { capacityTokens: o.cacheTokens * o.replicas, prefillTokensPerS: o.prefill });
for (const policy of ["p2c", "prefix", ...(shipped ? (["session"] as const) : []), "precise", "soonest"] as const) {
  // p2c draws at random: the median of three runs
  const runs = policy === "p2c" ? [run(policy), run(policy), run(policy)] : [run(policy)];
  const r = runs.sort((a, b) => a.hitRate - b.hitRate)[Math.floor(runs.length / 2)]!;
  console.log(
    `${policy}: hit rate ${(r.hitRate * 100).toFixed(1)} % (${((r.hitRate / best.hitRate) * 100).toFixed(0)} % of the ideal), modelled TTFT p50 ${r.ttftP50.toFixed(0)} / p90 ${r.ttftP90.toFixed(0)} / p99 ${r.ttftP99.toFixed(0)} ms`,
  );
}
console.log(
  `ideal (one cache of all replicas' capacity): hit rate ${(best.hitRate * 100).toFixed(1)} %, TTFT p90 ${best.ttftP90.toFixed(0)} ms (its uncached tokens alone, never queued)`,
);
