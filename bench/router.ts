// Router figures: the latency llmgw's router adds in front of two engines, beside nginx's proxy_pass and the least a
// Node proxy can do ("node floor", bench/node-floor.ts) in front of the same two, at fixed arrival rates (open loop)
// and at saturation (closed loop, 64 connections). The engines are `llmgw mock-engine` processes answering at once (no
// token pacing), so what is left is the cost of the hop. "direct" spreads the requests over both engines from the load
// generator itself, so each engine sees the same load in every set-up. The router is the built `llmgw serve` in a
// process of its own, on a database file, as users run it; the node floor runs in this process and the load generator
// in a child process of its own (so this process's CPU time is the node floor's). `--pin` gives the proxies (serve,
// this process, nginx) the last CPU and the generator and engines the others.
// First, at concurrency 1 (bench/router-latency.ts): what each hop adds to one request at a time, and to the first
// byte and the frame gaps of streams from engines paced at 20 ms a token. Needs nginx on the PATH (Debian: apt-get
// install nginx); takes about 10 minutes, `--latency-only` (the concurrency-1 part alone) about a minute and a half.
// Run: npx tsx bench/router.ts [--rates 200,500,1000] [--runs N] [--throughput-runs N] [--seconds S] [--pin]
//        [--latency-only] [--latency-requests N] [--latency-streams N]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { apiCaller, freePort, killAll, type Proc, start, startServe, until } from "../test/helpers/process.js";
import { declareReplicas } from "../test/helpers/router.js";
import { requireCurrentDist } from "./dist-check.js";
import { procStat } from "./fleet-servers.js";
import { type ClosedResult, type Job, type OpenResult, runLoad, type Shot } from "./load.js";
import { machine } from "./machine.js";
import { startNodeFloor } from "./node-floor.js";
import {
  type C1Mode,
  type C1Target,
  c1Body,
  measureC1,
  PACED_MODEL,
  PACED_TOKENS_PER_S,
  printC1,
} from "./router-latency.js";
import { startSerial } from "./router-serial.js";
import { nginxConf, routerOptions } from "./router-setup.js";
import { printLoops } from "./router-tables.js";

let args: ReturnType<typeof routerOptions>;
try {
  args = routerOptions();
  requireCurrentDist();
} catch (e) {
  console.error(`bench/router.ts: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
const MODEL = "bench";
const RATES = args.rates;
/** Runs per figure: three at the rate the aim is stated for and at concurrency 1, one at the others (unless --runs). */
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

/**
 * CPU time used so far, in ms, by each proxy: the router (serve), the node floor (this process: the load generator
 * runs in its own) and nginx.
 */
function cpuMs(pids: { router: number; nginx: number }) {
  const u = process.cpuUsage();
  return { router: procStat(pids.router).cpuMs, node: (u.user + u.system) / 1000, nginx: procStat(pids.nginx).cpuMs };
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
const dir = mkdtempSync(join(tmpdir(), "llmgw-bench-router-"));
const ADMIN = "router-bench-admin-token-0000000000001";
const serve = await startServe(["--db", join(dir, "llmgw.db")], { env: { LLMGW_ADMIN_TOKEN: ADMIN } }).catch(
  async (e: unknown) => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
    console.error(`bench/router.ts: llmgw serve did not start: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
const api = apiCaller(serve.url, ADMIN);
const engineProcs: Proc[] = [];
const abort = new AbortController();
const floors: { close(): Promise<void> }[] = [];
const stop = async () => {
  abort.abort();
  await Promise.all(floors.map((f) => f.close().catch(() => undefined)));
  await killAll();
  rmSync(dir, { recursive: true, force: true });
};
for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => void stop().finally(() => process.exit(130)));

try {
  const made = await api("PUT", "/api/v1/api-keys/bench", { spec: {} });
  if (made.status !== 201) throw new Error(`the API key: ${made.status} ${JSON.stringify(made.body)}`);
  const key = made.body.secret as string;
  /** Declares `model` with two replicas, starts their engines with `engineArgs`, waits until both serve it. */
  const replicas = async (model: string, engineArgs: string[]) =>
    (
      await declareReplicas(
        api,
        engineProcs,
        model,
        2,
        () => engineArgs,
        async () => {
          if ((await api("GET", `/api/v1/deployments/${model}`)).body.status?.ready !== 2) return false;
          const r = await fetch(`${serve.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
          return ((await r.json()) as { data: { id: string }[] }).data.some((m) => m.id === model);
        },
      )
    ).map((r) => r.url);
  const engines = await replicas(MODEL, ["--tokens-per-s", "0"]);
  // the paced engines serve a model of their own, behind an nginx server and a node floor of their own
  const paced = await replicas(PACED_MODEL, ["--tokens-per-s", String(PACED_TOKENS_PER_S)]);
  const ports = [await freePort(), await freePort()];
  writeFileSync(
    join(dir, "nginx.conf"),
    nginxConf(dir, [
      { port: ports[0]!, engines },
      { port: ports[1]!, engines: paced },
    ]),
  );
  const nginx = start("nginx", ["-c", join(dir, "nginx.conf"), "-p", dir, "-g", "daemon off;"]);
  const [nginxUrl, pacedNginxUrl] = ports.map((p) => `http://127.0.0.1:${p}`) as [string, string];
  await until(
    async () => (await fetch(`${nginxUrl}/health`)).ok && (await fetch(`${pacedNginxUrl}/health`)).ok,
    10_000,
    `nginx on ${nginxUrl} and ${pacedNginxUrl} (output: ${nginx.output()})`,
  );
  const floor = await startNodeFloor(engines);
  floors.push(floor);
  const pacedFloor = await startNodeFloor(paced);
  floors.push(pacedFloor);
  pin(serve.child.pid, PROXY_CPU);
  pin(process.pid, PROXY_CPU);
  pin(nginx.child.pid, PROXY_CPU);
  for (const e of engineProcs) pin(e.child.pid, OTHER_CPUS);

  const origins: Record<Target, string[]> = {
    direct: engines,
    router: [serve.url],
    "node floor": [floor.url],
    nginx: [nginxUrl],
  };
  const pacedOrigins: Record<C1Target, string[]> = {
    direct: paced,
    router: [serve.url],
    "node floor": [pacedFloor.url],
    nginx: [pacedNginxUrl],
  };
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const path = "/v1/chat/completions";
  const shot = (t: Target, mode: Mode): Shot => ({
    origins: origins[t],
    path,
    headers,
    body: JSON.stringify(MODES[mode]),
  });
  const c1Shot = (t: C1Target, mode: C1Mode): Shot => ({
    origins: (mode === "streaming" ? pacedOrigins : origins)[t],
    path,
    headers,
    body: c1Body(mode, MODEL),
  });
  const load = (job: Job) => runLoad(job, abort.signal, (pid) => pin(pid, OTHER_CPUS));
  /** Runs a load job against `t`, with the CPU time the proxy (router, node floor or nginx) spent per request sent. */
  async function measure<R extends { total: number }>(
    t: Target,
    mode: Mode,
    job: (s: Shot) => Job,
  ): Promise<R & { cpu: number }> {
    return withCpu(
      t,
      async () => (await load(job(shot(t, mode)))) as unknown as R,
      (r) => r.total,
    );
  }
  /** Runs `f`, with the CPU time the proxy for `t` spent per request sent (`sent` says how many). */
  async function withCpu<R>(t: Target, f: () => Promise<R>, sent: (r: R) => number): Promise<R & { cpu: number }> {
    const proc = t === "nginx" ? "nginx" : t === "router" ? "router" : "node";
    const pids = { router: serve.child.pid!, nginx: nginx.child.pid! };
    const before = cpuMs(pids);
    const result = await f();
    const after = cpuMs(pids);
    return { ...result, cpu: t === "direct" ? NaN : (after[proc] - before[proc]) / sent(result) };
  }

  const rssStart = procStat(serve.child.pid!).rssMb;
  console.log(`machine: ${machine()}`);
  console.log(
    `engines: 2 × llmgw mock-engine --tokens-per-s 0 (and 2 × --tokens-per-s ${PACED_TOKENS_PER_S} for the streams at concurrency 1); nginx ${nginxV.stderr.match(/nginx\/(\S+)/)?.[1] ?? "?"}, 1 worker; ${SECONDS} s per run after a ${WARMUP_S} s warm-up${args.pin ? `; pinned: proxies on CPU ${PROXY_CPU}, generator and engines on ${OTHER_CPUS}` : ""}`,
  );

  // targets interleaved within each run, so that a slower minute on the shared machine hits all of them alike
  const open = new Map<string, (OpenResult & { cpu: number })[]>();
  const closed = new Map<string, (ClosedResult & { cpu: number })[]>();
  const id = (mode: Mode, rate: number, t: Target) => `${mode}|${rate}|${t}`;
  const add = <V>(m: Map<string, V[]>, k: string, v: V) => m.set(k, [...(m.get(k) ?? []), v]);
  // warm every path once (JIT, connection pools, caches) before anything is measured
  for (const mode of MODE_NAMES)
    for (const t of TARGETS)
      await load({
        kind: "closed",
        shot: shot(t, mode),
        connections: 16,
        seconds: 0,
        warmupS: args.latencyOnly ? 0.5 : 2,
      });

  const serial = startSerial(abort.signal, (pid) => pin(pid, OTHER_CPUS));
  try {
    const c1 = await measureC1({
      runs: args.runs ?? 3,
      requests: args.latencyRequests,
      streams: args.latencyStreams,
      send: (t, mode, job) =>
        withCpu(
          t,
          () => serial.run({ shot: c1Shot(t, mode), ...job }),
          (r) => r.ok + r.errors + job.warmup,
        ),
    });
    printC1(c1, { streams: args.latencyStreams });
  } finally {
    serial.close();
  }

  for (const mode of args.latencyOnly ? [] : MODE_NAMES) {
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

  if (!args.latencyOnly)
    printLoops({
      open,
      closed,
      id,
      modes: MODE_NAMES,
      rates: RATES,
      targets: TARGETS,
      connections: CONNECTIONS,
      seconds: SECONDS,
      throughputRuns: THROUGHPUT_RUNS,
    });
  console.log(
    `\nrouter (serve) RSS: ${rssStart.toFixed(0)} MiB before the runs, ${procStat(serve.child.pid!).rssMb.toFixed(0)} MiB after`,
  );
} finally {
  await stop();
}
