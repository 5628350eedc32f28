// Routing figures: a KV-cache request trace replayed against R mock-engine replicas that keep a real prefix cache
// (agent/sim/prefix-cache.ts: time to first token = the prefills queued before it on that replica + its own uncached
// prompt tokens × prefill cost; --prefill-alone: each as if alone), through 1 or K router
// instances (`llmgw serve` processes on one sqld, each request sent to a random instance), for each policy: `random`
// (the floor: each request straight to a random replica, no router), `p2c` and `prefix`; and once more with `prefix`
// on K instances, one of them killed halfway. The hit rate is the engines' own (cached / prompt tokens in their usage),
// beside an ideal cache: one LRU of all replicas' capacity that sees every request.
// Run: npm run build && npx tsx bench/routing.ts [--trace FILE] [--limit N] [--speed X] [--replicas R] [--instances K]
//        [--policies random,p2c,prefix] [--key-blocks N] [--slack N] [--queue-factor X] [--key-on conversation|prompt]
//        (the knobs of the model spec's prefixRouting; absent: the router's defaults) [--prefill-alone]
//        [--api chat|completions]   (each request as a chat client sends it — a system message, then its turns — or as
//        one completion prompt, as inference-perf's shared-prefix workload does)
import { join } from "node:path";
import { parseArgs } from "node:util";
import { routingOf } from "../api/router/routing.js";
import { mockProfile } from "../test/helpers/agents.js";
import { startInstances, startSqld } from "../test/helpers/instances.js";
import { apiCaller, killAll, type Proc, ROOT } from "../test/helpers/process.js";
import { declareReplicas } from "../test/helpers/router.js";
import { requireCurrentDist } from "./dist-check.js";
import { machine } from "./machine.js";
import {
  idealCache,
  prefixKnobFlags,
  prefixRoutingOf,
  replay,
  replayApiFlag,
  replayApiOf,
  summarize,
  traceOrExit,
} from "./routing-replay.js";
import { promptOf, type TraceEntry, turnsOf } from "./trace.js";

function options() {
  const { values: v } = parseArgs({
    options: {
      trace: { type: "string", default: join(ROOT, "bench", "traces", "multi-tenant-chat.jsonl") },
      limit: { type: "string", default: "600" },
      speed: { type: "string", default: "2" },
      replicas: { type: "string", default: "4" },
      instances: { type: "string", default: "3" },
      "cache-tokens": { type: "string", default: "200000" },
      "prefill-tokens-per-s": { type: "string", default: "10000" },
      "max-tokens": { type: "string", default: "32" },
      policies: { type: "string", default: "random,p2c,prefix" },
      ...prefixKnobFlags,
      ...replayApiFlag,
      "prefill-alone": { type: "boolean", default: false },
    },
  });
  const num = (flag: string, x: string, min: number) => {
    const n = Number(x);
    if (!Number.isFinite(n) || n < min)
      throw new Error(`--${flag} wants a number from ${min} up, not ${JSON.stringify(x)}`);
    return n;
  };
  const policies = v.policies!.split(",");
  for (const p of policies)
    if (!["random", "p2c", "prefix"].includes(p)) throw new Error(`--policies: unknown policy ${JSON.stringify(p)}`);
  return {
    trace: v.trace!,
    limit: num("limit", v.limit!, 1),
    speed: num("speed", v.speed!, 0.01),
    replicas: num("replicas", v.replicas!, 1),
    instances: num("instances", v.instances!, 1),
    cacheTokens: num("cache-tokens", v["cache-tokens"]!, 1),
    prefill: num("prefill-tokens-per-s", v["prefill-tokens-per-s"]!, 1),
    maxTokens: num("max-tokens", v["max-tokens"]!, 1),
    policies,
    /** The model spec's prefixRouting: the knobs given. */
    prefixRouting: prefixRoutingOf(v),
    /** The engines prefill each request as if alone (--no-prefill-queue) rather than one at a time. */
    prefillAlone: v["prefill-alone"] === true,
    api: replayApiOf(v.api),
  };
}
let args: ReturnType<typeof options>;
try {
  args = options();
  requireCurrentDist();
} catch (e) {
  console.error(`bench/routing.ts: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}

const MODEL = "bench";
const ADMIN = "routing-bench-admin-token-000000000001";
const entries: TraceEntry[] = traceOrExit("bench/routing.ts", args.trace, args.limit);
// each request's messages as a chat client sends them: a system prompt, then its conversation's turns (--api chat)
const turns = turnsOf(entries);

/** The ideal cache for the run of `namespace` (routing-replay.ts idealCache), replies as the mock engine caches them. */
const ideal = (namespace: string) =>
  idealCache(
    entries.map((e) => `${namespace} ${promptOf(e)}`.split(/\s+/).filter(Boolean)),
    {
      capacityTokens: args.cacheTokens * args.replicas,
      prefillTokensPerS: args.prefill,
      replies: entries.map((e, i) =>
        Array.from({ length: Math.min(e.output_length, args.maxTokens) }, (_, j) => `reply-${i}-${j}`),
      ),
    },
  );

console.log(`machine: ${machine()}`);
console.log(
  `trace: ${args.trace.replace(`${ROOT}/`, "")}, ${entries.length} requests at ${args.speed}× speed; ${args.replicas} replicas of ${args.cacheTokens.toLocaleString("en")} cached tokens, prefill ${args.prefill} tokens/s ${args.prefillAlone ? "each request as if alone" : "one request at a time"}; sent as ${args.api === "chat" ? "chat completions" : "completions"}; replies capped at ${args.maxTokens} tokens; prefixRouting ${JSON.stringify(routingOf({ prefixRouting: args.prefixRouting }))}`,
);
const sqld = await startSqld();
const env = { LLMGW_ADMIN_TOKEN: ADMIN, LLMGW_LOG_LEVEL: "warn" };
const stack = await startInstances(sqld.url, args.instances, env);
const engines: Proc[] = [];
const urls = stack.instances.map((i) => i.url);
const api = apiCaller(urls[0]!, ADMIN);
try {
  const replicas = await declareReplicas(
    api,
    engines,
    MODEL,
    args.replicas,
    () => [
      "--prefix-cache-tokens",
      String(args.cacheTokens),
      "--prefill-tokens-per-s",
      String(args.prefill),
      "--tokens-per-s",
      "200",
      ...(args.prefillAlone ? ["--no-prefill-queue"] : []),
    ],
    async () => (await api("GET", `/api/v1/deployments/${MODEL}`)).body.status?.ready === args.replicas,
  );
  const key = (await api("PUT", "/api/v1/api-keys/bench", { spec: {} })).body.secret as string;
  const random = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!;
  const runs: { policy: string; instances: number; kill?: boolean }[] = [];
  for (const policy of args.policies) {
    runs.push({ policy, instances: 1 });
    if (policy !== "random" && args.instances > 1) runs.push({ policy, instances: args.instances });
  }
  if (args.policies.includes("prefix") && args.instances > 1)
    runs.push({ policy: "prefix", instances: args.instances, kill: true });
  const lines: string[] = [];
  for (const [n, run] of runs.entries()) {
    if (run.policy !== "random") {
      // (a second try: the keep-alive connection may have been closed by the server while the last run went)
      const put = (body: object) => api("PUT", `/api/v1/models/${MODEL}`, body);
      const spec = {
        spec: {
          weightsPath: `/models/${MODEL}`,
          profiles: [mockProfile("one")],
          routing: run.policy,
          ...(Object.keys(args.prefixRouting).length ? { prefixRouting: args.prefixRouting } : {}),
        },
      };
      await put(spec).catch(() => put(spec));
      // every instance's endpoint table re-reads the model within its 1 s cache
      await new Promise((r) => setTimeout(r, 2500));
    }
    const live = urls.slice(0, run.instances);
    const namespace = `run${n}`;
    const result = await replay({
      entries,
      speed: args.speed,
      maxTokens: args.maxTokens,
      namespace,
      turns,
      api: args.api,
      model: MODEL,
      key,
      pick: () => (run.policy === "random" ? random(replicas).url : random(live)),
      ...(run.kill
        ? {
            onHalf: () => {
              stack.instances[live.length - 1]!.child.kill("SIGKILL");
              live.pop();
            },
          }
        : {}),
    });
    const s = summarize(result);
    const best = ideal(namespace);
    const label = `${run.policy}, ${run.instances} instance${run.instances > 1 ? "s" : ""}${run.kill ? ", one killed halfway" : ""}`;
    console.log(
      `${label}: TTFT p50 ${s.p50.toFixed(0)} ms, p90 ${s.p90.toFixed(0)} ms, p99 ${s.p99.toFixed(0)} ms; hit rate ${(s.hitRate * 100).toFixed(1)} % (an ideal cache: ${(best.hitRate * 100).toFixed(1)} %, so ${((s.hitRate / best.hitRate) * 100).toFixed(0)} % of it; its TTFT p90 ${best.ttftP90.toFixed(0)} ms); ${s.reqPerS.toFixed(1)} req/s, ${s.outTokPerS.toFixed(0)} output tokens/s; ${s.errors} errors of ${s.requests}`,
    );
    lines.push(
      `routing: policy=${run.policy}${run.kill ? "+kill" : ""} instances=${run.instances} ttft_p90_ms=${s.p90.toFixed(0)} hit_rate=${s.hitRate.toFixed(3)}`,
    );
  }
  for (const l of lines) console.log(l);
} finally {
  await stack.close().catch(() => undefined);
  await sqld.close().catch(() => undefined);
  await killAll();
}
