// What bench/fleet.ts prints: a line per figure, phase and change, then the summary line last. A run that stopped
// early (registration past its deadline, an error) prints what it got, with "–" for what it did not reach.
import { LISTEN_BACKLOG } from "../api/http-server.js";
import type { ChangeResult } from "./fleet-change.js";
import type { PhaseStats } from "./fleet-messages.js";
import type { LoopWindow } from "./fleet-servers.js";
import { percentile } from "./load.js";

/** What one phase left: the agents' figures, each serve's loop window and placement counters, the TCP counters. */
export type Phase = {
  stats?: PhaseStats;
  loops?: (LoopWindow | undefined)[];
  /** llmgw_placement_duration_seconds count and sum per serve since the start of the run. */
  placements?: { count: number; sum: number }[];
  tcp?: { listenOverflows: number; synRetrans: number };
  /** Long-polls open and each serve's accept queue, sampled each second. */
  held: number[];
  accept: number[][];
};
export type Run = {
  agents: number;
  instances: number;
  seconds: number;
  concurrency: number;
  /** `seededS`: --preseed wrote the nodes to the database in that time, and the agents started over `rampS`. */
  registration?: {
    seconds: number;
    registered: number;
    failed: number;
    done: boolean;
    seededS?: number;
    rampS?: number;
    seenAgoS?: number;
    /** With --seen-ago: the nodes noted back from silence, the last this long after the agents started. */
    back?: { nodes: number; lastS: number };
  };
  phases: Record<string, Phase>;
  floor: number[];
  cpu: string[];
  changes: [string, ChangeResult][];
  mem: { rssMb: number; peakMb: number }[];
  lag: (number | undefined)[];
  warnings: [string, number][][];
};

const ms = (x: number) => (Number.isNaN(x) ? "–" : x < 10 ? x.toFixed(2) : x.toFixed(0));
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const p99 = (xs: number[]) => ms(percentile(sorted(xs), 99));
const dist = (xs: number[]) =>
  `p50 ${ms(percentile(sorted(xs), 50))} ms, p99 ${p99(xs)} ms, max ${ms(sorted(xs).at(-1) ?? NaN)} ms`;
const counts = (e: Record<string, number>) =>
  Object.entries(e)
    .map(([k, n]) => `${k} ×${n}`)
    .join(", ") || "none";
const range = (xs: number[]) => `min ${Math.min(...xs)}, median ${percentile(sorted(xs), 50)}, max ${Math.max(...xs)}`;

/** The agent processes' event-loop delay in a phase: a stalled one delays its calls and its deliveries' times. */
const agentLoops = (s: PhaseStats | undefined) =>
  `(ms past a 10 ms timer): ${(s?.loops ?? []).map((l, n) => `agents[${n}] p99 ${ms(l.p99)}, max ${ms(l.max)}`).join("; ") || "–"}`;

/** Deliveries by the instance whose answer brought them, where there are several: which one was late. */
const viaLine = (via: number[][]) =>
  via.length > 1
    ? ` (by the instance that answered: ${via.map((xs, n) => `serve[${n}] ${xs?.length ?? 0}, ${dist(xs ?? [])}`).join("; ")})`
    : "";

/** One line on a phase: loop delay, placement runs, connections waiting, calls that failed. */
function phaseLine(name: string, p: Phase, before: Phase | undefined): string {
  const loop = (p.loops ?? []).map((x, n) =>
    x ? `serve[${n}] p50 ${ms(x.p50)}, p99 ${ms(x.p99)}, max ${ms(x.max)}` : `serve[${n}] no answer`,
  );
  const heap = (p.loops ?? []).flatMap((x, n) =>
    x?.heapUsedMb === undefined
      ? []
      : [`serve[${n}] V8 heap ${x.heapUsedMb} MiB used of ${x.heapTotalMb}, ${x.externalMb} MiB outside it`],
  );
  const gc = (p.loops ?? []).flatMap((x, n) =>
    x?.gc
      ? [
          `serve[${n}] ${x.gc.young.n} scavenges (${ms(x.gc.young.ms)} ms, longest ${ms(x.gc.young.maxMs)}), ` +
            `${x.gc.full.n} full (${ms(x.gc.full.ms)} ms, longest ${ms(x.gc.full.maxMs)})`,
        ]
      : [],
  );
  const inside = (p.loops ?? []).flatMap((x, n) => {
    if (!x?.calls) return [];
    const c = x.calls;
    const one = (k: keyof typeof c, what: string) =>
      `${what} ${c[k].n}: p50 ${ms(c[k].p50)}, p99 ${ms(c[k].p99)}, max ${ms(c[k].max)}`;
    return [
      `serve[${n}] ${one("heartbeat", "heartbeats")}; ${one("status", "status reports")}; ${one("firstRequest", "new connections, accept to first request")}`,
    ];
  });
  const runs = (p.placements ?? []).map((x, n) => {
    const b = before?.placements?.[n] ?? { count: 0, sum: 0 };
    return `serve[${n}] ${x.count - b.count} runs, ${(x.sum - b.sum).toFixed(1)} s in all`;
  });
  const tcp =
    p.tcp && before?.tcp
      ? `${p.tcp.listenOverflows - before.tcp.listenOverflows} accept-queue overflows, ${p.tcp.synRetrans - before.tcp.synRetrans} SYNs sent again`
      : "–";
  const accept = p.accept.map((q, n) => `serve[${n}] max ${Math.max(0, ...q)}`).join(", ");
  return (
    `${name}: event-loop delay (ms past the probe's 10 ms timer) ${loop.join("; ") || "–"}; placement runs ` +
    `(llmgw_placement_duration_seconds, queueing included) ${runs.join("; ") || "–"}; TCP ${tcp}, accept queue ` +
    `(of ${LISTEN_BACKLOG}) ${accept}; ${inside.length ? `inside serve (ms) ${inside.join("; ")}; ` : ""}${gc.length ? `garbage collection ${gc.join("; ")}; ` : ""}${heap.length ? `memory at the end: ${heap.join("; ")}; ` : ""}failed calls ${counts(p.stats?.errors ?? {})}`
  );
}

/** Prints the run, the summary line last. */
export function printRun(r: Run): void {
  const reg = r.phases.register;
  if (r.registration) {
    const x = r.registration;
    const done = reg?.stats?.register ?? [];
    if (x.seededS !== undefined)
      console.log(
        `registration: none through the API (--preseed: ${r.agents} nodes written to the database in ${x.seededS.toFixed(1)} s` +
          `${x.seenAgoS ? `, last heard from ${x.seenAgoS} s before serve started` : ""}); ` +
          `each agent started polling at a random point of the first ${x.rampS} s` +
          (x.back === undefined
            ? ""
            : x.back.nodes
              ? `; ${x.back.nodes} noted back from silence, the last ${x.back.lastS.toFixed(1)} s after the agents started`
              : "; none noted back from silence"),
      );
    else
      console.log(
        `registration: ${x.registered} of ${r.agents} agents in ${x.seconds.toFixed(1)} s (${Math.round(x.registered / x.seconds)}/s, ` +
          `${r.concurrency} at a time)${x.done ? "" : " — STOPPED, not all registered by the deadline"}: ${dist(done)}; ${x.failed} gave up`,
      );
  }
  const steady = r.phases.steady;
  if (steady?.stats) {
    const s = steady.stats;
    console.log(
      `steady ${r.seconds} s: ${s.heartbeat.length} heartbeats (${Math.round((r.agents * r.seconds) / 60)} due): ${dist(s.heartbeat)}; ` +
        `long-polls open (sampled each second) ${range(steady.held)}`,
    );
    console.log(`floor: GET /healthz one at a time from the bench process during the steady phase: ${dist(r.floor)}`);
    console.log(`the agents' own event loops in the steady phase ${agentLoops(s)}`);
  }
  for (const line of r.cpu) console.log(line);
  for (const [n, m] of r.mem.entries())
    console.log(`serve[${n}] RSS peak ${m.peakMb.toFixed(0)} MiB, at the end ${m.rssMb.toFixed(0)} MiB`);
  let before: Phase | undefined = r.phases.start;
  for (const [name, p] of Object.entries(r.phases)) {
    if (name === "start") continue;
    console.log(phaseLine(name, p, before));
    before = p;
  }
  for (const [k, [what, c]] of r.changes.entries()) {
    const s = r.phases[`change${k + 1}`]?.stats;
    const steps = c.placedSteps.map(([t, n]) => `${n} at ${t} ms`).join(", ");
    const ready =
      c.readyMs === undefined
        ? `only ${c.ready} replicas ready by the deadline`
        : `all ready by the deployment's status after ${c.readyMs} ms`;
    console.log(
      `change ${k + 1} (${what}): PUT ${c.putStatus} in ${c.putMs} ms; ${c.placed} placed after ${c.placedMs} ms (${steps}; ` +
        `slowest status read ${c.slowestRead} ms); ${c.affected} nodes affected, ${c.delivered} delivered: ${dist(c.deliveryMs)} ` +
        `from the PUT${viaLine(c.deliveryVia)}; every ready report answered ${c.reportedMs === undefined ? "not by the deadline" : `after ${c.reportedMs} ms`}, ` +
        `then stored as ${JSON.stringify(c.stored)}; ${ready}; during it heartbeats ${dist(s?.heartbeat ?? [])}, ` +
        `status reports (${s?.status.length ?? 0}) ${dist(s?.status ?? [])}; the agents' own event loops ${agentLoops(s)}`,
    );
  }
  for (const [n, lag] of r.lag.entries())
    if (lag !== undefined) console.log(`serve[${n}] /metrics nodejs_eventloop_lag_p99_seconds ${lag}`);
  if (r.lag.every((x) => x === undefined))
    console.log("/metrics serves no event-loop figure (nodejs_eventloop_lag_*): the ones above are the probe's");
  for (const [n, w] of r.warnings.entries())
    if (w.length)
      console.log(
        `serve[${n}] log at warn and above: ${w
          .slice(0, 8)
          .map(([msg, k]) => `${k}× ${msg.slice(0, 200)}`)
          .join("; ")}`,
      );
  const c1 = r.changes[0]?.[1];
  const windows = steady?.loops ?? reg?.loops ?? [];
  const loop = windows.length ? Math.max(...windows.map((w) => w?.p99 ?? NaN)) : NaN;
  console.log(
    `fleet: agents=${r.agents} instances=${r.instances} heartbeat_p99_ms=${p99(steady?.stats?.heartbeat ?? [])} ` +
      `delivery_p99_ms=${p99(c1?.deliveryMs ?? [])} rss_mb=${r.mem.length ? Math.max(...r.mem.map((m) => m.peakMb)).toFixed(0) : "–"} ` +
      `loop_p99_ms=${ms(loop)}`,
  );
}
