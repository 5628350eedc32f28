// A small HTTP load generator for bench/router.ts: open loop (a fixed arrival rate, latency of each request to the end
// of its body) and closed loop (N connections back to back, requests per second). `runLoad` runs it in a child process
// (this file again), so that neither its event loop nor its CPU time is counted with the router's.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";

/** One kind of request, sent round-robin to `origins` (keep-alive connections to each). */
export type Shot = { origins: string[]; path: string; headers: Record<string, string>; body: string };
export type Job =
  | { kind: "open"; shot: Shot; rate: number; seconds: number; warmupS: number }
  | { kind: "closed"; shot: Shot; connections: number; seconds: number; warmupS: number };
/**
 * `total`: requests sent, warm-up included; `sent`: the arrival rate achieved; `done`: answers per second until the
 * last one; `lagP99`: how late requests left.
 */
export type OpenResult = {
  kind: "open";
  total: number;
  ok: number;
  errors: number;
  sent: number;
  done: number;
  p50: number;
  p99: number;
  lagP99: number;
};
export type ClosedResult = { kind: "closed"; total: number; ok: number; errors: number; rps: number };

const JOB_FLAG = "--load-job";
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** The p-th percentile (0–100) of ascending numbers. */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Sends one request and reads its body to the end; true when it answered 200. */
function sender(shot: Shot, connections: number) {
  const pools = shot.origins.map((o) => new Pool(o, { connections, keepAliveTimeout: 30_000 }));
  let next = 0;
  return {
    async send(): Promise<boolean> {
      const pool = pools[next++ % pools.length]!;
      try {
        const r = await pool.request({
          path: shot.path,
          method: "POST",
          headers: shot.headers,
          body: shot.body,
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        });
        await r.body.arrayBuffer();
        return r.statusCode === 200;
      } catch {
        return false;
      }
    },
    close: () => Promise.all(pools.map((p) => p.close())),
  };
}

/** Fixed arrival rate: request i leaves at start + i/rate whether or not earlier ones have answered. */
async function openLoop(send: () => Promise<boolean>, rate: number, seconds: number) {
  const n = Math.round(rate * seconds);
  const latency: number[] = [];
  const lag: number[] = [];
  const pending: Promise<void>[] = [];
  let errors = 0;
  const t0 = performance.now();
  let i = 0;
  while (i < n) {
    const now = performance.now();
    for (; i < n && t0 + (i * 1000) / rate <= now; i++) {
      const s = performance.now();
      lag.push(s - (t0 + (i * 1000) / rate));
      pending.push(send().then((ok) => (ok ? void latency.push(performance.now() - s) : void errors++)));
    }
    await sleep(1);
  }
  const sentS = (performance.now() - t0) / 1000;
  await Promise.all(pending);
  const doneS = (performance.now() - t0) / 1000;
  latency.sort((a, b) => a - b);
  lag.sort((a, b) => a - b);
  return {
    ok: latency.length,
    errors,
    sent: n / sentS,
    done: latency.length / doneS,
    p50: percentile(latency, 50),
    p99: percentile(latency, 99),
    lagP99: percentile(lag, 99),
  };
}

/** `connections` loops, each sending its next request when the last one has answered. */
async function closedLoop(send: () => Promise<boolean>, connections: number, seconds: number) {
  let ok = 0;
  let errors = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const loop = async () => {
    while (performance.now() < end) (await send()) ? ok++ : errors++;
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return { ok, errors, rps: ok / ((performance.now() - t0) / 1000) };
}

/** Runs a job in this thread: a warm-up (connections opened, code paths hot), then the measured part. */
export async function load(job: Job): Promise<OpenResult | ClosedResult> {
  const conns = job.kind === "open" ? 256 : Math.ceil(job.connections / job.shot.origins.length);
  const s = sender(job.shot, conns);
  try {
    if (job.kind === "open") {
      const w = await openLoop(s.send, job.rate, job.warmupS);
      const r = await openLoop(s.send, job.rate, job.seconds);
      return { kind: "open", total: w.ok + w.errors + r.ok + r.errors, ...r };
    }
    const w = await closedLoop(s.send, job.connections, job.warmupS);
    const r = await closedLoop(s.send, job.connections, job.seconds);
    return { kind: "closed", total: w.ok + w.errors + r.ok + r.errors, ...r };
  } finally {
    await s.close();
  }
}

/**
 * Runs a job in a child process (this file, loaded through tsx as this process is); `signal` kills it; `started` sees
 * its pid.
 */
export function runLoad<J extends Job>(
  job: J,
  signal: AbortSignal,
  started?: (pid: number | undefined) => void,
): Promise<J extends { kind: "open" } ? OpenResult : ClosedResult> {
  const child = fork(fileURLToPath(import.meta.url), [JOB_FLAG, JSON.stringify(job)], { signal });
  started?.(child.pid);
  return new Promise((ok, fail) => {
    child.once("message", (m) => ok(m as never));
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`load generator exited (${code}) without a result`)));
  });
}

if (process.argv[2] === JOB_FLAG && process.send) {
  process.send(await load(JSON.parse(process.argv[3]!) as Job), () => process.exit(0));
}
