// Loaded into each `llmgw serve` of bench/fleet.ts with `node --import` (the API's /metrics has no event-loop figure):
// measures the process's event-loop delay with perf_hooks. On SIGUSR2 it writes what it saw since the last SIGUSR2
// (ms: p50, p99, max, mean; a sequence number), its garbage collections in that window (count, total and longest
// pause, ms: scavenges of the young generation apart from the other collections), and where its memory is at that
// moment (MiB: the V8 heap used and held, memory outside the heap), to $FLEET_LOOP_FILE and starts over, so the
// benchmark reads one window per phase. The figures are the delay past the 10 ms sampling timer (perf_hooks counts the
// timer in: an idle loop reads 10.1 ms there, and prom-client's nodejs_eventloop_lag_* would too). It also times the
// agents' heartbeats and status reports inside serve (from their headers parsed to their answer's last byte, by Node's
// http diagnostics channels) and a new connection's wait from its accept to its first request's headers, so that a
// wait the agents see can be told apart from one in serve. Plain JavaScript, so that serve runs without a TypeScript
// loader.
import { subscribe } from "node:diagnostics_channel";
import { renameSync, writeFileSync } from "node:fs";
import { constants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";

const file = process.env.FLEET_LOOP_FILE;
if (file) {
  const RESOLUTION_MS = 10;
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  let seq = 0;
  const ms = (ns) => Math.max(0, Math.round((ns - RESOLUTION_MS * 1e6) / 1e4) / 100);
  const mib = (b) => Math.round(b / 1048576);
  const pauses = () => ({ young: { n: 0, ms: 0, maxMs: 0 }, full: { n: 0, ms: 0, maxMs: 0 } });
  let gc = pauses();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const g = e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR ? gc.young : gc.full;
      g.n++;
      g.ms += e.duration;
      g.maxMs = Math.max(g.maxMs, e.duration);
    }
  }).observe({ entryTypes: ["gc"] });
  // per call kind, the durations (ms) in this window; a new socket's accept time until its first request
  let calls = { heartbeat: [], status: [], firstRequest: [] };
  const started = new WeakMap();
  const accepted = new WeakMap();
  const kindOf = (req) =>
    req.method === "POST"
      ? req.url.endsWith("/heartbeat")
        ? "heartbeat"
        : req.url.endsWith("/status")
          ? "status"
          : undefined
      : undefined;
  subscribe("net.server.socket", ({ socket }) => accepted.set(socket, performance.now()));
  subscribe("http.server.request.start", ({ request, response, socket }) => {
    const t = performance.now();
    const at = accepted.get(socket);
    if (at !== undefined) {
      calls.firstRequest.push(t - at);
      accepted.delete(socket);
    }
    const kind = kindOf(request);
    if (kind) started.set(response, { kind, t });
  });
  subscribe("http.server.response.finish", ({ response }) => {
    const s = started.get(response);
    if (s) calls[s.kind].push(performance.now() - s.t);
  });
  const summary = (xs) => {
    const v = [...xs].sort((a, b) => a - b);
    const at = (q) =>
      v.length ? Math.round(v[Math.min(v.length - 1, Math.floor((q / 100) * v.length))] * 100) / 100 : 0;
    return { n: v.length, p50: at(50), p99: at(99), max: at(100) };
  };
  process.on("SIGUSR2", () => {
    // started with --expose-gc (NODE_OPTIONS): the heap as live objects leave it, garbage collected first
    const collected = gc;
    globalThis.gc?.();
    gc = pauses();
    const m = process.memoryUsage();
    const window = {
      heapUsedMb: mib(m.heapUsed),
      heapTotalMb: mib(m.heapTotal),
      externalMb: mib(m.external),
      seq: ++seq,
      p50: ms(h.percentile(50)),
      p99: ms(h.percentile(99)),
      max: ms(h.max),
      mean: ms(h.mean),
      count: h.count,
      gc: collected,
      calls: {
        heartbeat: summary(calls.heartbeat),
        status: summary(calls.status),
        firstRequest: summary(calls.firstRequest),
      },
    };
    calls = { heartbeat: [], status: [], firstRequest: [] };
    h.reset();
    writeFileSync(`${file}.tmp`, JSON.stringify(window));
    renameSync(`${file}.tmp`, file);
  });
}
