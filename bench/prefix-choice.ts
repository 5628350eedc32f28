// What prefix routing's choice costs per request: the prompt's head rendered, its leading blocks hashed, its own
// characters counted (the request's slack) and the replicas ranked, for a 100,000-token chat prompt (about 400,000
// characters) among 8 ready replicas. The body is parsed once beforehand: the router parses every body anyway, for its
// model.
// Run: npx tsx bench/prefix-choice.ts [--runs N]
import { parseArgs } from "node:util";
import { byPrefix } from "../api/router/balancer.js";
import { prefixPick } from "../api/router/prefix.js";
import { routingOf } from "../api/router/routing.js";
import type { Endpoint } from "../api/router/types.js";
import { machine, median } from "./machine.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const RUNS = Number(values.runs);
const CALLS = 20_000;
const words = Array.from({ length: 100_000 }, (_, i) => `w${(i * 2654435761) % 100_000}`);
const body = {
  model: "m",
  messages: [
    { role: "system", content: "You are a helpful assistant. ".repeat(40) },
    { role: "user", content: words.join(" ") },
  ],
};
const replicas: Endpoint[] = Array.from({ length: 8 }, (_, i) => ({
  replicaId: `r${i + 1}`,
  deployment: "d",
  model: "m",
  url: `http://10.0.0.${i + 1}:20000`,
}));
const routing = routingOf({});
if (routing.policy !== "prefix") throw new Error("the default routing is prefix");
const load = new Map(replicas.map((r, i) => [r.url, i % 3]));
const inflight = (url: string) => load.get(url) ?? 0;
// prompts not yet begun on each replica, in characters (the queue bound's count)
const waiting = new Map(replicas.map((r, i) => [r.url, (i % 4) * 50_000]));
const queued = (url: string) => waiting.get(url) ?? 0;

console.log(`machine: ${machine()}`);
console.log(
  `prompt: ${body.messages[1]!.content.length.toLocaleString("en")} characters, ${words.length} words; ${replicas.length} replicas`,
);
const p50s: number[] = [];
const p99s: number[] = [];
for (let run = 0; run < RUNS; run++) {
  const t: number[] = new Array(CALLS);
  for (let i = 0; i < CALLS; i++) {
    const s = performance.now();
    byPrefix(replicas, inflight, prefixPick("/v1/chat/completions", body, routing)!, queued);
    t[i] = performance.now() - s;
  }
  t.sort((a, b) => a - b);
  p50s.push(t[Math.floor(CALLS * 0.5)]! * 1000);
  p99s.push(t[Math.floor(CALLS * 0.99)]! * 1000);
}
console.log(
  `prefix choice: p50 ${median(p50s).toFixed(1)} µs, p99 ${median(p99s).toFixed(1)} µs (median of ${RUNS} runs of ${CALLS.toLocaleString("en")}; aim p99 ≤ 50 µs)`,
);
