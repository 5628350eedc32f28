// Router figures: the latency llmgw's router adds in front of two engines, beside nginx's proxy_pass and the least a
// Node proxy can do ("node floor", bench/node-floor.ts) in front of the same two, at fixed arrival rates (open loop)
// and at saturation (closed loop, 64 connections). The engines are `llmgw mock-engine` processes answering at once (no
// token pacing), so what is left is the cost of the hop. "direct" spreads the requests over both engines from the load
// generator itself, so each engine sees the same load in every set-up. The router and the node floor run in this
// process (never at the same time), the load generator in a child process of its own (so this process's CPU time is
// the proxy's). `--pin` gives the proxies (this process, nginx) the last CPU and the generator and engines the others.
// Needs nginx on the PATH (Debian: apt-get install nginx); takes about 9 minutes.
// Run: npx tsx bench/router.ts [--rates 200,500,1000] [--runs N] [--throughput-runs N] [--seconds S] [--pin]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_USAGE_FLUSH_MS } from "../api/router/usage.js";
import { freePort, killAll, start, until } from "../test/helpers/process.js";
import { startStack } from "../test/helpers/router.js";
import { type ClosedResult, type Job, type OpenResult, runLoad, type Shot } from "./load.js";
import { machine, median } from "./machine.js";
import { startNodeFloor } from "./node-floor.js";

/** The command line, checked before anything starts (a bad flag exits 2 with a message). */
function options() {
  const { values: v } = parseArgs({
    options: {
      rates: { type: "string" },
      runs: { type: "string" },
      "throughput-runs": { type: "string" },
      seconds: { type: "string" },
      pin: { type: "boolean" },
    },
  });
  const whole = (flag: string, x: string | undefined, dflt: number, min = 0) => {
    const n = x === undefined ? dflt : Number(x);
    if (x?.trim() === "" || !Number.isInteger(n) || n < min)
      throw new Error(`--${flag} wants a whole number from ${min} up, not ${JSON.stringify(x)}`);
    return n;
  };
  const rates = (v.rates ?? "200,500,1000").split(",").map((r) => whole("rates", r, 0, 1));
  const runs = v.runs === undefined ? undefined : whole("runs", v.runs, 0, 1);
  if (v.pin && availableParallelism() < 2) throw new Error("--pin needs at least two CPUs");
  return {
    rates,
    runs,
    seconds: whole("seconds", v.seconds, 5, 1),
    throughputRuns: whole("throughput-runs", v["throughput-runs"], 3),
    pin: !!v.pin,
  };
}
let args: ReturnType<typeof options>;
try {
  args = options();
} catch (e) {
  console.error(`bench/router.ts: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
const MODEL = "bench";
const RATES = args.rates;
/** Runs per figure: three at the rate the aim is stated for, one at the others (unless --runs says). */
const RUNS = (rate: number) => args.runs ?? (rate === 1000 ? 3 : 1);
const SECONDS = args.seconds;
const WARMUP_S = 1;
const CONNECTIONS = 64;
const THROUGHPUT_RUNS = args.throughputRuns;
const TARGETS = ["direct", "router", "node floor", "nginx"] as const;
type Target = (typeof TARGETS)[number];

const MODES = {
  "non-streaming": { model: MODEL, messages: [{ role: "user", content: "Say something short." }], max_tokens: 16 },
  "streaming (8 tokens)": {
    model: MODEL,
    messages: [{ role: "user", content: "Say something short." }],
    max_tokens: 8,
    stream: true,
    stream_options: { include_usage: true },
  },
};
type Mode = keyof typeof MODES;
const MODE_NAMES = Object.keys(MODES) as Mode[];

/** nginx in the foreground, one worker, upstream keep-alive, no buffering (SSE passes through). */
function nginxConf(dir: string, port: number, engines: string[]): string {
  return `worker_processes 1;
master_process off;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream engines {
${engines.map((u) => `    server ${u.replace("http://", "")};`).join("\n")}
    keepalive 256;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://engines;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`;
}

const ms = (x: number) => x.toFixed(2);
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const sign = (x: number) => `${x < 0 ? "−" : "+"}${ms(Math.abs(x))}`;

const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));
/**
 * CPU time used so far, in ms, by this process (the router or the node floor: the load generator runs in its own) and
 * by nginx.
 */
function cpuMs(nginxPid: number) {
  const u = process.cpuUsage();
  const stat = readFileSync(`/proc/${nginxPid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return { node: (u.user + u.system) / 1000, nginx: (Number(stat[11]) + Number(stat[12])) * TICK_MS };
}

// --pin: the proxies get the last CPU to themselves; the load generator and the engines share the others
const CPUS = availableParallelism();
const PROXY_CPU = String(CPUS - 1);
const OTHER_CPUS = CPUS > 1 ? `0-${CPUS - 2}` : "0";
/** Pins every thread of `pid` to `cpus` (with --pin). */
const pin = (pid: number | undefined, cpus: string) =>
  void (args.pin && pid && execFileSync("taskset", ["-acp", cpus, String(pid)], { stdio: "ignore" }));

// checked before anything starts: a missing nginx must not leave engines behind
const nginxV = spawnSync("nginx", ["-v"], { encoding: "utf8" });
if (nginxV.error) {
  console.error(`bench/router.ts needs nginx on the PATH (Debian: apt-get install nginx): ${nginxV.error.message}`);
  process.exit(1);
}
const stack = await startStack({ tableTtlMs: 1000, usageFlushMs: DEFAULT_USAGE_FLUSH_MS });
const dir = mkdtempSync(join(tmpdir(), "llmgw-bench-router-"));
const abort = new AbortController();
let closeFloor: () => Promise<unknown> = async () => undefined;
const stop = async () => {
  abort.abort();
  await closeFloor().catch(() => undefined);
  await killAll();
  await stack.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
};
for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => void stop().finally(() => process.exit(130)));

try {
  const key = await stack.key("bench");
  const engines = (await stack.replicas(MODEL, 2, () => ["--tokens-per-s", "0"])).map((r) => r.url);
  const nginxPort = await freePort();
  writeFileSync(join(dir, "nginx.conf"), nginxConf(dir, nginxPort, engines));
  const nginx = start("nginx", ["-c", join(dir, "nginx.conf"), "-p", dir, "-g", "daemon off;"]);
  const nginxUrl = `http://127.0.0.1:${nginxPort}`;
  await until(
    async () => (await fetch(`${nginxUrl}/health`)).ok,
    10_000,
    `nginx on ${nginxUrl} (output: ${nginx.output()})`,
  );
  const floor = await startNodeFloor(engines);
  closeFloor = floor.close;
  pin(process.pid, PROXY_CPU);
  pin(nginx.child.pid, PROXY_CPU);
  for (const e of stack.engines) pin(e.child.pid, OTHER_CPUS);

  const origins: Record<Target, string[]> = {
    direct: engines,
    router: [stack.url],
    "node floor": [floor.url],
    nginx: [nginxUrl],
  };
  const shot = (t: Target, mode: Mode): Shot => ({
    origins: origins[t],
    path: "/v1/chat/completions",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(MODES[mode]),
  });
  const load = (job: Job) => runLoad(job, abort.signal, (pid) => pin(pid, OTHER_CPUS));
  /** Runs a load job against `t`, with the CPU time the proxy (router, node floor or nginx) spent per request sent. */
  async function measure<R extends { total: number }>(
    t: Target,
    mode: Mode,
    job: (s: Shot) => Job,
  ): Promise<R & { cpu: number }> {
    const proc = t === "nginx" ? "nginx" : "node";
    const before = cpuMs(nginx.child.pid!);
    const result = (await load(job(shot(t, mode)))) as unknown as R;
    const after = cpuMs(nginx.child.pid!);
    return { ...result, cpu: t === "direct" ? NaN : (after[proc] - before[proc]) / result.total };
  }

  const heapStart = process.memoryUsage().heapUsed;
  console.log(`machine: ${machine()}`);
  console.log(
    `engines: 2 × llmgw mock-engine --tokens-per-s 0; nginx ${nginxV.stderr.match(/nginx\/(\S+)/)?.[1] ?? "?"}, 1 worker; ${SECONDS} s per run after a ${WARMUP_S} s warm-up${args.pin ? `; pinned: proxies on CPU ${PROXY_CPU}, generator and engines on ${OTHER_CPUS}` : ""}`,
  );

  // targets interleaved within each run, so that a slower minute on the shared machine hits all of them alike
  const open = new Map<string, (OpenResult & { cpu: number })[]>();
  const closed = new Map<string, (ClosedResult & { cpu: number })[]>();
  const id = (mode: Mode, rate: number, t: Target) => `${mode}|${rate}|${t}`;
  const add = <V>(m: Map<string, V[]>, k: string, v: V) => m.set(k, [...(m.get(k) ?? []), v]);
  // warm every path once (JIT, connection pools, caches) before anything is measured
  for (const mode of MODE_NAMES)
    for (const t of TARGETS)
      await load({ kind: "closed", shot: shot(t, mode), connections: 16, seconds: 0, warmupS: 2 });
  for (const mode of MODE_NAMES) {
    for (const rate of RATES) {
      for (let run = 0; run < RUNS(rate); run++) {
        for (const t of TARGETS)
          add(
            open,
            id(mode, rate, t),
            await measure<OpenResult>(t, mode, (shot) => ({
              kind: "open",
              shot,
              rate,
              seconds: SECONDS,
              warmupS: WARMUP_S,
            })),
          );
      }
    }
    for (let run = 0; run < THROUGHPUT_RUNS; run++) {
      for (const t of TARGETS)
        add(
          closed,
          id(mode, 0, t),
          await measure<ClosedResult>(t, mode, (shot) => ({
            kind: "closed",
            shot,
            connections: CONNECTIONS,
            seconds: SECONDS,
            warmupS: WARMUP_S,
          })),
        );
    }
  }

  const W = [22, 7, 15, 8, 8, 18, 20, 9, 10, 0];
  const row = (cells: string[]) =>
    console.log(
      cells
        .map((c, i) => c.padEnd(W[i]!))
        .join("")
        .trimEnd(),
    );
  const cpu = (xs: { cpu: number }[]) => (Number.isNaN(xs[0]!.cpu) ? "" : ms(median(xs.map((x) => x.cpu))));
  console.log(
    "\nopen loop: latency to the end of the body, ms (median over runs of each run's p50 and p99; added: median of the per-run differences from direct);",
  );
  console.log(
    "gen lag: p99 of how late the generator sent; proxy CPU: ms of CPU the proxy (this process for the router and the node floor, or nginx) used per request",
  );
  row([
    "mode",
    "rate/s",
    "target",
    "sent/s",
    "done/s",
    "p50 / p99",
    "added p50 / p99",
    "gen lag",
    "proxy CPU",
    "errors",
  ]);
  for (const mode of MODE_NAMES) {
    for (const rate of RATES) {
      const direct = open.get(id(mode, rate, "direct"))!;
      for (const t of TARGETS) {
        const runs = open.get(id(mode, rate, t))!;
        const med = (k: "p50" | "p99" | "sent" | "done" | "lagP99") => median(runs.map((r) => r[k]));
        const added = (k: "p50" | "p99") => median(runs.map((r, i) => r[k] - direct[i]![k]));
        row([
          mode,
          String(rate),
          `${t}${runs.length > 1 ? ` ×${runs.length}` : ""}`,
          med("sent").toFixed(0),
          med("done").toFixed(0),
          `${ms(med("p50"))} / ${ms(med("p99"))}`,
          t === "direct" ? "" : `${sign(added("p50"))} / ${sign(added("p99"))}`,
          ms(med("lagP99")),
          cpu(runs),
          String(runs.reduce((n, r) => n + r.errors, 0)),
        ]);
      }
    }
  }
  if (THROUGHPUT_RUNS)
    console.log(
      `\nclosed loop, ${CONNECTIONS} connections, ${SECONDS} s: requests/s, median of ${THROUGHPUT_RUNS} (range); proxy CPU ms per request`,
    );
  for (const mode of THROUGHPUT_RUNS ? MODE_NAMES : []) {
    for (const t of TARGETS) {
      const runs = closed.get(id(mode, 0, t))!;
      const rps = runs.map((x) => x.rps);
      row([
        mode,
        "",
        t,
        median(rps).toFixed(0),
        `(${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)})`,
        "",
        "",
        "",
        cpu(runs),
        String(runs.reduce((n, r) => n + r.errors, 0)),
      ]);
    }
  }
  console.log(
    `\nrouter process heap used: ${mib(heapStart)} MiB before the runs, ${mib(process.memoryUsage().heapUsed)} MiB after`,
  );
} finally {
  await stop();
}
