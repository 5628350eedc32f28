// bench/router.ts's concurrency-1 part: what each hop adds to one request on an otherwise idle path, as other
// gateways state their overhead. Non-streaming requests go to the engines that answer at once; streams go to engines
// paced at 20 ms a token, so that the time to the first byte and the gaps between frames as the client sees them show
// a proxy that holds, buffers or batches frames. The targets are interleaved within each run; each figure is the
// median over runs of each run's p50 or p99, and "added" the median of the per-run differences from direct.
import { median } from "./machine.js";
import type { SerialJob, SerialResult } from "./router-serial.js";

export const C1_TARGETS = ["direct", "router", "node floor", "nginx"] as const;
export type C1Target = (typeof C1_TARGETS)[number];
export const C1_MODES = ["non-streaming", "streaming"] as const;
export type C1Mode = (typeof C1_MODES)[number];
/** The model the paced engines serve, their pace, and the tokens in each measured stream. */
export const PACED_MODEL = "bench-paced";
export const PACED_TOKENS_PER_S = 50;
const STREAM_TOKENS = 4;
const PACE_MS = 1000 / PACED_TOKENS_PER_S;
/** The aims the issue states: router added p99 at concurrency 1, and added p50 at 1,000 req/s (open loop). */
export const AIM_C1_P99_MS = 0.5;
export const AIM_1000_P50_MS = 0.5;

/** The request body of each concurrency-1 mode. */
export function c1Body(mode: C1Mode, model: string): string {
  const messages = [{ role: "user", content: "Say something short." }];
  return JSON.stringify(
    mode === "non-streaming"
      ? { model, messages, max_tokens: 16 }
      : {
          model: PACED_MODEL,
          messages,
          max_tokens: STREAM_TOKENS,
          stream: true,
          stream_options: { include_usage: true },
        },
  );
}

type Measured = SerialResult & { cpu: number };
type Send = (t: C1Target, mode: C1Mode, job: Omit<SerialJob, "shot">) => Promise<Measured>;

/** Runs every target `runs` times in each mode, interleaved, and returns each (mode, target)'s runs in order. */
export async function measureC1(o: { runs: number; requests: number; streams: number; send: Send }) {
  const out = new Map<string, Measured[]>();
  for (const mode of C1_MODES) {
    const job =
      mode === "non-streaming"
        ? { requests: o.requests, warmup: Math.min(500, o.requests) }
        : // a stream: the role frame at once, then one frame a token, each one pace after the last
          { requests: o.streams, warmup: 3, pacedFrames: STREAM_TOKENS };
    for (let run = 0; run < o.runs; run++)
      for (const t of C1_TARGETS) {
        const k = `${mode}|${t}`;
        out.set(k, [...(out.get(k) ?? []), await o.send(t, mode, job)]);
      }
  }
  return (mode: C1Mode, t: C1Target) => out.get(`${mode}|${t}`)!;
}

const ms = (x: number) => (Number.isNaN(x) ? "–" : x.toFixed(2));
const sign = (x: number) => `${x < 0 ? "−" : "+"}${ms(Math.abs(x))}`;
const pad = (w: number[]) => (cells: string[]) =>
  console.log(
    cells
      .map((c, i) => c.padEnd(w[i] ?? 0))
      .join("")
      .trimEnd(),
  );

/** Prints the concurrency-1 tables and summary line; returns the figures the summary names. */
export function printC1(
  get: ReturnType<typeof measureC1> extends Promise<infer G> ? G : never,
  o: { streams: number },
) {
  const runs = get("non-streaming", "direct").length;
  type Pick = (r: SerialResult) => number;
  const med = (mode: C1Mode, t: C1Target, f: Pick) => median(get(mode, t).map(f));
  const added = (mode: C1Mode, t: C1Target, f: Pick) => {
    const direct = get(mode, "direct");
    return median(get(mode, t).map((r, i) => f(r) - f(direct[i]!)));
  };
  const cpu = (mode: C1Mode, t: C1Target) => (t === "direct" ? "" : ms(med(mode, t, (r) => (r as Measured).cpu)));
  const errors = (mode: C1Mode, t: C1Target) => String(get(mode, t).reduce((n, r) => n + r.errors, 0));
  const pair = (a: number, b: number, f = ms) => `${f(a)} / ${f(b)}`;

  console.log(
    `\nconcurrency 1: one request at a time (closed loop, one connection per origin), ms; median over ${runs} runs of each run's p50 and p99; added: median of the per-run differences from direct; proxy CPU: ms per request`,
  );
  const ns = pad([12, 17, 19, 11, 0]);
  console.log(
    `non-streaming (16 tokens, engines answer at once), ${get("non-streaming", "direct")[0]!.ok} requests per run:`,
  );
  ns(["target", "p50 / p99", "added p50 / p99", "proxy CPU", "errors"]);
  for (const t of C1_TARGETS)
    ns([
      t,
      pair(
        med("non-streaming", t, (r) => r.total.p50),
        med("non-streaming", t, (r) => r.total.p99),
      ),
      t === "direct"
        ? ""
        : pair(
            added("non-streaming", t, (r) => r.total.p50),
            added("non-streaming", t, (r) => r.total.p99),
            sign,
          ),
      cpu("non-streaming", t),
      errors("non-streaming", t),
    ]);
  const st = pad([12, 17, 19, 19, 19, 10, 11, 0]);
  console.log(
    `streaming (a role frame, then ${STREAM_TOKENS} token frames ${PACE_MS} ms apart: --tokens-per-s ${PACED_TOKENS_PER_S}), ${o.streams} streams per run; TTFB: to the first body byte; gap: between consecutive paced frames as they arrived; together: paced frames that came in the same read as the one before (all runs)`,
  );
  st([
    "target",
    "TTFB p50 / p99",
    "added p50 / p99",
    "gap p50 / p99",
    "gap added p50/p99",
    "together",
    "proxy CPU",
    "errors",
  ]);
  for (const t of C1_TARGETS)
    st([
      t,
      pair(
        med("streaming", t, (r) => r.ttfb.p50),
        med("streaming", t, (r) => r.ttfb.p99),
      ),
      t === "direct"
        ? ""
        : pair(
            added("streaming", t, (r) => r.ttfb.p50),
            added("streaming", t, (r) => r.ttfb.p99),
            sign,
          ),
      pair(
        med("streaming", t, (r) => r.gap.p50),
        med("streaming", t, (r) => r.gap.p99),
      ),
      t === "direct"
        ? ""
        : pair(
            added("streaming", t, (r) => r.gap.p50),
            added("streaming", t, (r) => r.gap.p99),
            sign,
          ),
      `${get("streaming", t).reduce((n, r) => n + r.gap.together, 0)} of ${get("streaming", t).reduce((n, r) => n + r.gap.n, 0)}`,
      cpu("streaming", t),
      errors("streaming", t),
    ]);

  const f = {
    router_added_p50_ms: added("non-streaming", "router", (r) => r.total.p50),
    router_added_p99_ms: added("non-streaming", "router", (r) => r.total.p99),
    nginx_added_p50_ms: added("non-streaming", "nginx", (r) => r.total.p50),
    nginx_added_p99_ms: added("non-streaming", "nginx", (r) => r.total.p99),
    router_ttfb_added_p50_ms: added("streaming", "router", (r) => r.ttfb.p50),
    router_ttfb_added_p99_ms: added("streaming", "router", (r) => r.ttfb.p99),
    nginx_ttfb_added_p50_ms: added("streaming", "nginx", (r) => r.ttfb.p50),
    nginx_ttfb_added_p99_ms: added("streaming", "nginx", (r) => r.ttfb.p99),
    direct_gap_p50_ms: med("streaming", "direct", (r) => r.gap.p50),
    direct_gap_p99_ms: med("streaming", "direct", (r) => r.gap.p99),
    router_gap_p50_ms: med("streaming", "router", (r) => r.gap.p50),
    router_gap_p99_ms: med("streaming", "router", (r) => r.gap.p99),
    nginx_gap_p50_ms: med("streaming", "nginx", (r) => r.gap.p50),
    nginx_gap_p99_ms: med("streaming", "nginx", (r) => r.gap.p99),
  };
  const over = f.router_added_p99_ms - AIM_C1_P99_MS;
  // the per-run differences say how far to trust the median: a tail below direct's is noise, not a gain
  const perRun = (t: C1Target) => {
    const direct = get("non-streaming", "direct");
    return get("non-streaming", t)
      .map((r, i) => sign(r.total.p99 - direct[i]!.total.p99))
      .join(", ");
  };
  console.log(
    `aim: router added p99 ≤ ${AIM_C1_P99_MS} ms, non-streaming at concurrency 1: ${sign(f.router_added_p99_ms)} ms — ${over <= 0 ? "met" : `missed by ${ms(over)} ms`}; per run: router ${perRun("router")}; node floor ${perRun("node floor")}; nginx ${perRun("nginx")}`,
  );
  console.log(
    `router-c1: ${Object.entries(f)
      .map(([k, v]) => `${k}=${ms(v)}`)
      .join(" ")} aim_c1_p99=${over <= 0 ? "met" : "missed"}`,
  );
  return f;
}
