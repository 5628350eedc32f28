// A one-request-at-a-time load generator for bench/router.ts's concurrency-1 figures: each request leaves when the last
// one has been read to its end, over one keep-alive connection per origin (round-robin). For each request it notes the
// time to the first byte of the body and to its end; for a stream, also when each SSE frame arrived, so the gaps
// between paced frames as the client sees them show a proxy that buffers or batches frames. It runs in a child process
// (this file again) that stays up for all the jobs, so that neither its event loop nor its CPU time is the proxy's.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { percentile, type Shot } from "./load.js";

/**
 * `requests` measured after `warmup` unmeasured ones; `pacedFrames`: for a stream, how many frames after the first
 * the engine paces (their gaps are the inter-frame figures).
 */
export type SerialJob = { shot: Shot; requests: number; warmup: number; pacedFrames?: number };
export type Spread = { p50: number; p99: number };
/**
 * `total`: to the end of the body; `ttfb`: to its first byte; `gap`: between consecutive paced frames, with
 * `together`, how many of those frames came in the same read as the one before (batched), all in ms.
 */
export type SerialResult = {
  ok: number;
  errors: number;
  total: Spread;
  ttfb: Spread;
  gap: Spread & { n: number; together: number };
};

const JOB_FLAG = "--serial-jobs";
const LF = 10;
const spread = (xs: number[]): Spread => {
  xs.sort((a, b) => a - b);
  return { p50: percentile(xs, 50), p99: percentile(xs, 99) };
};

/** Sends one request and reads it to the end, noting when each SSE frame (a blank line ends one) was complete. */
async function once(pool: Pool, shot: Shot) {
  const t0 = performance.now();
  const r = await pool.request({
    path: shot.path,
    method: "POST",
    headers: shot.headers,
    body: shot.body,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  let first = NaN;
  const frames: { at: number; read: number }[] = [];
  let read = 0;
  let lastWasLf = false;
  for await (const chunk of r.body as AsyncIterable<Buffer>) {
    const at = performance.now();
    if (Number.isNaN(first)) first = at;
    for (let i = 0; i < chunk.length; i++) {
      const lf = chunk[i] === LF;
      if (lf && lastWasLf) frames.push({ at, read });
      lastWasLf = lf;
    }
    read++;
  }
  return { ok: r.statusCode === 200, total: performance.now() - t0, ttfb: first - t0, frames };
}

/** Runs one job in this thread. */
async function serial(job: SerialJob): Promise<SerialResult> {
  const pools = job.shot.origins.map((o) => new Pool(o, { connections: 1, keepAliveTimeout: 30_000 }));
  const total: number[] = [];
  const ttfb: number[] = [];
  const gap: number[] = [];
  let together = 0;
  let errors = 0;
  try {
    for (let i = 0; i < job.warmup + job.requests; i++) {
      const r = await once(pools[i % pools.length]!, job.shot).catch(() => undefined);
      if (i < job.warmup) continue;
      if (!r?.ok) {
        errors++;
        continue;
      }
      total.push(r.total);
      ttfb.push(r.ttfb);
      for (let k = 1; k <= (job.pacedFrames ?? 0) && k < r.frames.length; k++) {
        gap.push(r.frames[k]!.at - r.frames[k - 1]!.at);
        if (r.frames[k]!.read === r.frames[k - 1]!.read) together++;
      }
    }
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
  return {
    ok: total.length,
    errors,
    total: spread(total),
    ttfb: spread(ttfb),
    gap: { ...spread(gap), n: gap.length, together },
  };
}

/**
 * Starts the generator in a child process (this file, loaded through tsx as this process is), which runs jobs one at
 * a time until closed; `signal` kills it; `started` sees its pid.
 */
export function startSerial(signal: AbortSignal, started?: (pid: number | undefined) => void) {
  const child = fork(fileURLToPath(import.meta.url), [JOB_FLAG], { signal });
  started?.(child.pid);
  let failed: Error | undefined;
  child.once("exit", (code) => (failed = new Error(`serial load generator exited (${code})`)));
  // the abort signal kills it: an error event then, which must not throw
  child.on("error", (e) => (failed ??= e));
  return {
    run: (job: SerialJob) =>
      new Promise<SerialResult>((ok, fail) => {
        if (failed) return fail(failed);
        const onExit = () => fail(failed);
        child.once("exit", onExit);
        child.once("message", (m) => {
          child.off("exit", onExit);
          ok(m as SerialResult);
        });
        child.send(job);
      }),
    close: () => void child.kill(),
  };
}

if (process.argv[2] === JOB_FLAG && process.send) {
  process.on("message", async (job: SerialJob) => process.send!(await serial(job)));
  process.on("disconnect", () => process.exit(0));
}
