// Fleet figures: N simulated agents (bench/fleet-agents.ts, in child processes of their own) speaking the agent's real
// HTTP protocol against real `llmgw serve` processes (the built CLI): one on the embedded file database, or several on
// one sqld with every agent call going round-robin over them. Phases: registration (paced, at most --concurrency at
// once), a steady phase of --seconds (heartbeats every 60 s, first at a random point; long-polls held), then one
// measured change — a tp8 deployment on about a tenth of the fleet's nodes — and a second (scaled up by half): the
// time from the PUT until each affected agent's poll brought its new shards. Beside them: the API's CPU, RSS and
// event-loop delay (a perf_hooks probe preloaded into serve: /metrics serves none), the TCP accept queue, and the floor
// of GET /healthz from this process during the steady phase. Registration that has not finished by
// --register-timeout stops the run there, with what it got printed.
// Run: npm run build && npx tsx bench/fleet.ts [--agents 10000] [--seconds 120] [--instances 1|3] [--procs 2]
//        [--replicas N] [--concurrency 50] [--sqld-scheme ws|http] [--sqld-wal libsql-wal|default]
//        [--register-timeout 1200] [--cpu-prof DIR] (serve's whole run, and each agent process's over the changes)
//        [--agents-nice=N] (a value below 0 goes after "=")
//        [--serve-node-options=OPTS] (NODE_OPTIONS for the serve processes, e.g. --max-semi-space-size=32)
//        [--serve-log-level LEVEL] (LLMGW_LOG_LEVEL's; warn by default; serve's own default, info, logs every call)
//        [--preseed [--seen-ago S]] (the nodes written to the database first; last heard from S seconds before: the
//        run then says how many nodes the API noted back from silence, and when the last was)
import type { ChildProcess } from "node:child_process";
import { setPriority } from "node:os";
import { tempDir } from "../test/helpers/db.js";
import { apiCaller, killAll } from "../test/helpers/process.js";
import { forkAgents } from "./fleet-agents.js";
import { deliveryLog, measureChange } from "./fleet-change.js";
import { fleetMix, KINDS } from "./fleet-inventory.js";
import type { AgentsJob, FromAgents, PhaseStats } from "./fleet-messages.js";
import { options } from "./fleet-options.js";
import { type Phase, printRun, type Run } from "./fleet-report.js";
import { seedNodes } from "./fleet-seed.js";
import {
  acceptQueue,
  loopWindow,
  metricValues,
  procStat,
  sqldExited,
  startServers,
  tcpCounters,
  warnings,
} from "./fleet-servers.js";
import { steadyPhase } from "./fleet-steady.js";
import { machine } from "./machine.js";

let args: ReturnType<typeof options>;
try {
  args = options();
} catch (e) {
  console.error(`bench/fleet.ts: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
const ADMIN = "fleet-bench-admin-token-0000000000000001";
const MODEL = "fleet-llm";
const DEPLOYMENT = "fleet-chat";
const sleep = (ms: number) => new Promise<void>((ok) => setTimeout(ok, ms));

console.log(`machine: ${machine()}`);
const mix = fleetMix(args.agents);
console.log(
  `fleet: ${args.agents} agents (${KINDS.map((k) => `${mix[k.kind] ?? 0} ${k.gpuClass}`).join(", ")}) in ${args.procs} processes${args.agentsNice ? ` at nice ${args.agentsNice}` : ""} → ` +
    (args.instances === 1
      ? "1 llmgw serve on the embedded file database"
      : `${args.instances} llmgw serve on one sqld (${args.scheme}://, ${args.wal === "default" ? "its default WAL" : "libsql-wal"}), calls round-robin`) +
    (args.serveNodeOptions ? `, serve with NODE_OPTIONS=${args.serveNodeOptions}` : "") +
    `, serve logging at ${args.serveLogLevel}`,
);
const tmp = tempDir("llmgw-fleet-");
let seededS: number | undefined;
/** --preseed: agents start over this many seconds (a fleet coming back to a restarted control plane). */
const RAMP_S = 30;
const servers = await startServers({
  count: args.instances,
  dir: tmp.dir,
  adminToken: ADMIN,
  scheme: args.scheme,
  wal: args.wal,
  cpuProfDir: args.cpuProfDir,
  nodeOptions: args.serveNodeOptions,
  logLevel: args.serveLogLevel,
  ...(args.preseed
    ? { beforeServe: async (url: string) => void (seededS = await seedNodes(url, args.agents, args.seenAgoS)) }
    : {}),
}).catch((e: unknown) => {
  tmp.cleanup();
  console.error(`bench/fleet.ts: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
const urls = servers.instances.map((i) => i.url);
const call = apiCaller(urls[0]!, ADMIN);
/** The admin's calls, sent again after `Retry-After` while the API answers 503 (an instance shedding writes), for 2 minutes. */
const api: typeof call = async (...args) => {
  const end = performance.now() + 120_000;
  for (;;) {
    const r = await call(...args);
    if (r.status !== 503 || performance.now() > end) return r;
    await sleep(Number(r.headers.get("retry-after") ?? 1) * 1000);
  }
};
/**
 * How many nodes the API noted back from silence (`node_recovered` events), and when the last was, in seconds after
 * the agents started at `startedAt` (ms since the epoch). Each node's first call after an outage notes its return.
 */
async function noteBack(startedAt: number): Promise<{ nodes: number; lastS: number } | undefined> {
  const nodes = new Set<string>();
  let last = startedAt;
  for (let before: number | undefined; ; ) {
    const r = await api("GET", `/api/v1/events?type=node_recovered&limit=1000${before ? `&before=${before}` : ""}`);
    if (r.status !== 200) return undefined;
    const items = r.body.items as { id: number; at: number; nodeId: string }[];
    for (const e of items) {
      nodes.add(e.nodeId);
      last = Math.max(last, e.at);
    }
    if (items.length < 1000) break;
    before = items.at(-1)!.id;
  }
  return { nodes: nodes.size, lastS: (last - startedAt) / 1000 };
}
const children: ChildProcess[] = [];
let stopping = false;
let failure: string | undefined;
async function cleanup() {
  stopping = true;
  for (const c of children) c.kill("SIGKILL");
  await servers.close().catch(() => undefined);
  await killAll();
  tmp.cleanup();
}
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const)
  process.on(signal, () => void cleanup().finally(() => process.exit(code)));

const run: Run = {
  agents: args.agents,
  instances: args.instances,
  seconds: args.seconds,
  concurrency: args.concurrency,
  phases: {},
  floor: [],
  cpu: [],
  changes: [],
  mem: [],
  lag: [],
  warnings: [],
};
const fresh = (): Phase => ({ held: [], accept: servers.instances.map(() => []) });
let phase = "register";
run.phases.register = fresh();

// what the agent processes say
const deliveries = deliveryLog();
const open = Array.from({ length: args.procs }, () => 0);
const signedUp = Array.from({ length: args.procs }, () => 0);
const gaveUp: number[] = [];
let polling = 0;
const replies: PhaseStats[] = [];
const heard = (n: number) => (m: FromAgents) => {
  if (m.type === "sample") [open[n], signedUp[n]] = [m.open, m.registered];
  else if (m.type === "deliveries") deliveries.add(m.items);
  else if (m.type === "registered") {
    signedUp[n] = m.registered;
    gaveUp.push(m.failed);
  } else if (m.type === "polling") polling++;
  else replies.push(m.stats);
};
/** Waits until `done`; false after `ms`; throws when an agent process died. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!done()) {
    if (failure) throw new Error(failure);
    if (Date.now() > end) return false;
    await sleep(50);
  }
  return true;
}
/** Ends the agents' current phase (and starts `next`): their figures of the phase that ended, merged. */
async function endPhase(next: string): Promise<PhaseStats> {
  replies.length = 0;
  for (const c of children) c.send({ type: "phase", name: next });
  if (!(await until(() => replies.length === children.length, 30_000))) throw new Error("the agents did not answer");
  const merged: PhaseStats = { name: replies[0]!.name, register: [], heartbeat: [], status: [], errors: {}, loops: [] };
  for (const r of replies) {
    merged.loops.push(...r.loops);
    for (const k of ["register", "heartbeat", "status"] as const) merged[k].push(...r[k]);
    for (const [k, n] of Object.entries(r.errors)) merged.errors[k] = (merged.errors[k] ?? 0) + n;
  }
  return merged;
}
const PLACEMENT = ["llmgw_placement_duration_seconds_count", "llmgw_placement_duration_seconds_sum"];
const scrape = (names: string[]) =>
  Promise.all(
    urls.map(async (u) => {
      const r = await fetch(`${u}/metrics`, { signal: AbortSignal.timeout(60_000) }).catch(() => undefined);
      return metricValues(r?.ok ? await r.text() : "", names);
    }),
  );
const placements = async () =>
  (await scrape(PLACEMENT)).map((m) => ({ count: m[PLACEMENT[0]!] ?? NaN, sum: m[PLACEMENT[1]!] ?? NaN }));
/**
 * Ends the current phase: the probes' windows and the agents' figures, then the placement counters — a scrape reads
 * the whole cluster, so what it costs (and a second to settle) counts in neither phase.
 */
async function phaseDone(next: string) {
  const p = run.phases[phase]!;
  p.loops = await Promise.all(servers.instances.map((i) => loopWindow(i)));
  p.tcp = tcpCounters();
  p.stats = await endPhase("between");
  phase = "between";
  p.placements = await placements();
  await sleep(1000);
  await Promise.all(servers.instances.map((i) => loopWindow(i)));
  await endPhase(next);
  run.phases[next] = fresh();
  phase = next;
}
const sampler = setInterval(() => {
  const p = run.phases[phase];
  if (!p) return;
  p.held.push(open.reduce((a, b) => a + b, 0));
  servers.instances.forEach((i, n) => void p.accept[n]!.push(acceptQueue(i.port) ?? 0));
}, 1000);

try {
  await Promise.all(servers.instances.map((i) => loopWindow(i))); // start-up is not a phase
  run.phases.start = { ...fresh(), placements: await placements(), tcp: tcpCounters() };
  // registration: the agents start at once, each registering as soon as one of the concurrency slots is free
  const t0 = performance.now();
  const startedAt = Date.now();
  for (let n = 0; n < args.procs; n++) {
    const job: AgentsJob = {
      origins: urls,
      adminToken: ADMIN,
      first: n,
      count: Math.max(0, Math.ceil((args.agents - n) / args.procs)),
      stride: args.procs,
      concurrency: Math.max(1, Math.round(args.concurrency / args.procs)),
      readyMs: [2000, 8000],
      ...(args.cpuProfDir ? { cpuProfDir: args.cpuProfDir } : {}),
      // serve's defaults (LLMGW_POLL_WAIT_S, LLMGW_HEARTBEAT_INTERVAL_S), which the registration answer would give
      ...(args.preseed ? { seeded: { rampS: RAMP_S, pollWaitS: 50, heartbeatS: 60 } } : {}),
    };
    const child = forkAgents(job, heard(n));
    if (args.agentsNice)
      try {
        setPriority(child.pid!, args.agentsNice);
      } catch (e) {
        throw new Error(`--agents-nice ${args.agentsNice}: ${(e as Error).message} (below 0 needs root)`);
      }
    child.on("exit", (code) => {
      if (!stopping) failure = `an agent process exited (${code})`;
    });
    children.push(child);
  }
  const progress = setInterval(() => {
    const n = signedUp.reduce((a, b) => a + b, 0);
    console.error(`  … ${n} registered after ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }, 60_000);
  const done = await until(() => gaveUp.length === args.procs, args.registerTimeoutS * 1000);
  clearInterval(progress);
  run.registration = {
    seconds: (performance.now() - t0) / 1000,
    registered: signedUp.reduce((a, b) => a + b, 0),
    failed: gaveUp.reduce((a, b) => a + b, 0),
    done,
    ...(seededS === undefined ? {} : { seededS, rampS: RAMP_S, seenAgoS: args.seenAgoS }),
  };
  if (!done) throw new Error(`registration did not finish in ${args.registerTimeoutS} s`);
  if (!(await until(() => polling === args.procs, 300_000))) throw new Error("not every agent's first poll answered");
  if (args.seenAgoS) run.registration.back = await noteBack(startedAt);
  const model = await api("PUT", `/api/v1/models/${MODEL}`, {
    spec: {
      weightsPath: "/models/llama-3.1-8b-instruct",
      profiles: [{ name: "tp8", engine: "vllm", gpuClass: "h100-80g", tp: 8, gpusPerNode: 8 }],
    },
  });
  if (model.status !== 201 && model.status !== 200) throw new Error(`PUT model: ${model.status}`);
  await phaseDone("steady");

  // steady: nothing declared changes; heartbeats and long-polls only
  const steady = await steadyPhase(servers, urls, children, args.seconds, args.agents);
  run.floor.push(...steady.floor);
  run.cpu.push(...steady.cpu);
  await phaseDone("change1");

  // the measured changes
  const change = { deployment: DEPLOYMENT, model: MODEL, deadlineMs: 180_000 };
  const c1 = await measureChange(api, deliveries, { ...change, replicas: args.replicas, before: new Set() });
  run.changes.push([`deployment ${DEPLOYMENT} created with ${args.replicas} replicas`, c1]);
  await phaseDone("change2");
  const scaled = args.replicas + Math.max(1, Math.round(args.replicas / 2));
  const c2 = await measureChange(api, deliveries, { ...change, replicas: scaled, before: c1.nodes });
  run.changes.push([`scaled to ${scaled} replicas`, c2]);
  await phaseDone("end");
  delete run.phases.end;
} catch (e) {
  console.error(`bench/fleet.ts: ${e instanceof Error ? e.message : String(e)}; printing what the run got`);
  const p = run.phases[phase];
  if (p && !p.stats) {
    p.loops = await Promise.all(servers.instances.map((i) => loopWindow(i)));
    p.tcp = tcpCounters();
    p.stats = await endPhase("end").catch(() => undefined);
    p.placements = await placements();
  }
  process.exitCode = 1;
}
clearInterval(sampler);
run.lag = (await scrape(["nodejs_eventloop_lag_p99_seconds"])).map((m) => m.nodejs_eventloop_lag_p99_seconds);
run.mem = servers.instances.map((i) => procStat(i.pid));
run.warnings = servers.instances.map((i) => warnings(i.proc));
const sqldExit = sqldExited(servers);
if (sqldExit) console.log(sqldExit);
await cleanup();
printRun(run);
process.exit();
