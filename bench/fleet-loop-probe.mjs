// Loaded into each `llmgw serve` of bench/fleet.ts with `node --import` (the API's /metrics has no event-loop figure):
// measures the process's event-loop delay with perf_hooks. On SIGUSR2 it writes what it saw since the last SIGUSR2
// (ms: p50, p99, max, mean; a sequence number), its garbage collections in that window (count, total and longest
// pause, ms: scavenges of the young generation apart from the other collections), and where its memory is at that
// moment (MiB: the V8 heap used and held, memory outside the heap), to $FLEET_LOOP_FILE and starts over, so the
// benchmark reads one window per phase. The figures are the delay past the 10 ms sampling timer (perf_hooks counts the
// timer in: an idle loop reads 10.1 ms there, and prom-client's nodejs_eventloop_lag_* would too). Plain JavaScript, so
// that serve runs without a TypeScript loader.
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
    };
    h.reset();
    writeFileSync(`${file}.tmp`, JSON.stringify(window));
    renameSync(`${file}.tmp`, file);
  });
}
