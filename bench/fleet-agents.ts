// The simulated agents of bench/fleet.ts, run in child processes (this file again) so that their CPU is not the API's.
// Each agent speaks the agent's real protocol: registers with a real inventory, long-polls its assignments with the
// wait the registration answer gives, sends each heartbeat between two polls with the body agent/heartbeat.ts builds
// (when and with what poll wait as agent/loop.ts decides), and reports each new shard `starting`, then `ready` a few
// seconds later (a vanished one `stopped`). What it measures goes to the parent over IPC, per phase.
import { type ChildProcess, fork } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { POLL_MARGIN_S } from "../agent/client.js";
import { HEARTBEAT_EARLY, pollWaitS } from "../agent/loop.js";
import { heartbeatRetryMs } from "../agent/session.js";
import { heartbeatOf } from "../shared/heartbeat-of.js";
import type { ShardReport } from "../shared/schemas/agent.js";
import type { Inventory } from "../shared/schemas/inventory.js";
import { profiler } from "./cpu-profile.js";
import { httpPools } from "./fleet-http.js";
import { inventoryOf, nodeIdOf, registrationOf, seededToken, withReadings } from "./fleet-inventory.js";
import type { AgentsJob, Delivery, FromAgents, PhaseStats, ToAgents } from "./fleet-messages.js";

const JOB_FLAG = "--fleet-agents";
const MIN_POLL_INTERVAL_MS = 1000;
const sleep = (ms: number) => new Promise<void>((ok) => setTimeout(ok, ms));
/**
 * After the I/O callbacks ready now: an agent's calls after an answer (its status report, its next poll) wait until
 * every answer that has arrived meanwhile was read. One process stands for thousands of machines; sending one agent's
 * calls first made the answers behind them wait in this process (up to a few hundred ms when 500 arrive at once after
 * a change), and that wait counted as the API's delivery time.
 */
const afterReads = () => new Promise<void>((ok) => setImmediate(ok));
const uniform = ([lo, hi]: [number, number]) => lo + Math.random() * (hi - lo);

type Agent = {
  i: number;
  node: string;
  inv: Inventory;
  token: string;
  index: number;
  pollWaitS: number;
  heartbeatS: number;
  /** When it last sent a heartbeat (or registered), ms; how many it sent; failures in a row, no new try before. */
  beatAt: number;
  beats: number;
  beatFailures: number;
  retryAt: number;
  shards: Map<string, ShardReport>;
  /** The deployment of each shard it runs. */
  deploymentOf: Map<string, string>;
  /** The shard ids of the last answer, sorted; undefined before the first. */
  key?: string;
};
type Answer = { index: number; shards: { shardId: string; replicaId: string; deployment: string }[] };

/** Runs the job's agents until the parent says stop. */
async function runAgents(job: AgentsJob, send: (m: FromAgents) => void) {
  const http = httpPools(job.origins);
  let stopped = false;
  let open = 0;
  const fresh = (name: string): PhaseStats => ({
    name,
    register: [],
    heartbeat: [],
    status: [],
    errors: {},
    loops: [],
  });
  let phase = fresh("register");
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const pastTimer = (ns: number) => Math.max(0, Math.round((ns - 10e6) / 1e4) / 100);
  let deliveries: Delivery[] = [];
  const fail = (what: string, e: unknown) => {
    const why = typeof e === "number" ? String(e) : ((e as { code?: string }).code ?? (e as Error).name ?? "error");
    phase.errors[`${what} ${why}`] = (phase.errors[`${what} ${why}`] ?? 0) + 1;
  };
  const timed = async (what: "heartbeat" | "status", call: () => ReturnType<typeof http.call>) => {
    const t = performance.now();
    try {
      const r = await call();
      if (r.status === 200) {
        phase[what].push(performance.now() - t);
        return r.via;
      }
      fail(what, r.status);
    } catch (e) {
      fail(what, e);
    }
    return undefined;
  };
  const agentPath = (a: Agent, rest: string) => `/api/v1/agents/${a.node}/${rest}`;

  /** Reports `moves` (when there are any); the instance that answered, where it answered 200. */
  const report = async (a: Agent, moves: ShardReport[]) =>
    moves.length
      ? timed("status", () => http.call("POST", agentPath(a, "status"), a.token, { shards: moves }, 30_000, a.index))
      : undefined;

  /**
   * What the supervisor would report for a new answer: new shards starting (ready later), vanished ones stopped. The
   * report is sent before the next poll, as the agent's loop sends it (agent/loop.ts): on the connection the answer
   * freed, rather than beside the next poll on a second one.
   */
  async function answered(a: Agent, shards: Answer["shards"], at: number, via: number) {
    const key = shards
      .map((s) => s.shardId)
      .sort()
      .join(",");
    const first = a.key === undefined;
    if (key === a.key) return;
    a.key = key;
    if (!first)
      deliveries.push({
        kind: "shards",
        node: a.node,
        at,
        deployments: [...new Set(shards.map((s) => s.deployment))],
        via,
      });
    const wanted = new Set(shards.map((s) => s.shardId));
    const moves: ShardReport[] = [];
    for (const s of shards) {
      if (a.shards.has(s.shardId)) continue;
      const r: ShardReport = { shardId: s.shardId, replicaId: s.replicaId, state: "starting", at };
      a.shards.set(s.shardId, r);
      a.deploymentOf.set(s.shardId, s.deployment);
      moves.push(r);
    }
    for (const [id, r] of a.shards) {
      if (wanted.has(id)) continue;
      a.shards.delete(id);
      a.deploymentOf.delete(id);
      moves.push({ ...r, state: "stopped", at });
    }
    const reported = afterReads().then(() => report(a, moves));
    const started = moves.filter((m) => m.state === "starting").map((m) => m.shardId);
    if (started.length)
      setTimeout(() => {
        const ready = started.flatMap((id) => {
          const r = a.shards.get(id);
          return r ? [Object.assign(r, { state: "ready", at: Date.now() })] : [];
        });
        if (stopped || !ready.length) return;
        void report(
          a,
          ready.map((r) => ({ ...r })),
        ).then((via) => {
          const names = [...new Set(ready.map((r) => a.deploymentOf.get(r.shardId) ?? ""))];
          if (via !== undefined)
            deliveries.push({ kind: "ready", node: a.node, at: Date.now(), deployments: names, via });
        });
      }, uniform(job.readyMs));
    await reported;
  }

  // agents whose first poll was answered, of how many registered (-1 while registration goes on)
  let polled = 0;
  let total = -1;
  const polledOnce = () => {
    if (++polled === total) send({ type: "polling" });
  };

  /**
   * Sends the agent's heartbeat when it is due within HEARTBEAT_EARLY of the interval; ms until the next is due. One
   * that fails (counted already) is tried again after a back-off, the agent polling on meanwhile, as the agent's
   * session does.
   */
  async function heartbeat(a: Agent) {
    const dueIn = () => Math.max(a.beatAt + a.heartbeatS * 1000, a.retryAt) - Date.now();
    if (dueIn() > a.heartbeatS * 1000 * HEARTBEAT_EARLY) return dueIn();
    const body = heartbeatOf(withReadings(a.inv, a.beats++), [...a.shards.values()]);
    const via = await timed("heartbeat", () =>
      http.call("POST", agentPath(a, "heartbeat"), a.token, body, 30_000, a.index),
    );
    if (via === undefined) a.retryAt = Date.now() + heartbeatRetryMs(++a.beatFailures, a.heartbeatS);
    else [a.beatAt, a.retryAt, a.beatFailures] = [Date.now(), 0, 0];
    return dueIn();
  }

  async function polls(a: Agent) {
    let last = -Infinity;
    let failures = 0;
    let first = true;
    while (!stopped) {
      const early = last + MIN_POLL_INTERVAL_MS - Date.now();
      if (early > 0) await sleep(early);
      if (stopped) break;
      last = Date.now();
      try {
        const wait = pollWaitS(a.pollWaitS, await heartbeat(a));
        if (stopped) break;
        const path = agentPath(a, `assignments?index=${a.index}&wait=${wait}`);
        open++;
        let r: Awaited<ReturnType<typeof http.call>>;
        try {
          r = await http.call("GET", path, a.token, undefined, (wait + POLL_MARGIN_S) * 1000, a.index);
        } finally {
          open--;
        }
        if (r.status !== 200) throw r.status;
        const answer = JSON.parse(r.text) as Answer;
        a.index = answer.index;
        if (first) polledOnce();
        first = false;
        failures = 0;
        await answered(a, answer.shards, Date.now(), r.via);
        await afterReads();
      } catch (e) {
        if (stopped) break;
        fail("poll", e);
        await sleep(Math.min(30_000, 1000 * 2 ** failures++) * (0.5 + Math.random() / 2));
      }
    }
  }

  let registered = 0;
  let failed = 0;
  /** An agent's state before its first heartbeat: none sent or failed, no shards. */
  const unbeaten = () => ({
    beats: 0,
    beatFailures: 0,
    retryAt: 0,
    shards: new Map<string, ShardReport>(),
    deploymentOf: new Map<string, string>(),
  });
  async function register(i: number): Promise<Agent | undefined> {
    const inv = inventoryOf(i);
    if (job.seeded) {
      await sleep(Math.random() * job.seeded.rampS * 1000);
      registered++;
      const { pollWaitS, heartbeatS } = job.seeded;
      // seeded, not registered: its first heartbeat at a random point of the interval, so that the fleet's are spread
      const beatAt = Date.now() - Math.random() * heartbeatS * 1000;
      return {
        i,
        node: nodeIdOf(i),
        inv,
        token: seededToken(i),
        index: 0,
        pollWaitS,
        heartbeatS,
        beatAt,
        ...unbeaten(),
      };
    }
    const body = registrationOf(i, inv);
    for (let attempt = 1; attempt <= 5 && !stopped; attempt++) {
      const t = performance.now();
      try {
        const r = await http.call("POST", "/api/v1/agents/register", job.adminToken, body, 60_000);
        if (r.status !== 200 && r.status !== 201) throw r.status;
        phase.register.push(performance.now() - t);
        registered++;
        const reply = JSON.parse(r.text) as { nodeToken: string; pollWaitS: number; heartbeatIntervalS: number };
        return {
          i,
          node: nodeIdOf(i),
          inv,
          token: reply.nodeToken,
          index: 0,
          pollWaitS: reply.pollWaitS,
          heartbeatS: reply.heartbeatIntervalS,
          // a registration stands for a heartbeat, as the agent's session counts it
          beatAt: Date.now(),
          ...unbeaten(),
        };
      } catch (e) {
        fail("register", e);
        await sleep(1000 * attempt);
      }
    }
    failed++;
    return undefined;
  }

  const tick = setInterval(() => {
    send({ type: "sample", open, registered });
    if (deliveries.length) send({ type: "deliveries", items: deliveries });
    deliveries = [];
  }, 250);
  const profile = job.cpuProfDir ? profiler(job.cpuProfDir, `agents-${job.first}`) : undefined;
  process.on("message", async (m: ToAgents) => {
    if (m.type === "phase") {
      if (m.name === "change1") profile?.start();
      // written before the phase's answer, which the parent waits for before it ends this process
      if (m.name === "end") await profile?.stop();
      phase.loops = [{ p99: pastTimer(loop.percentile(99)), max: pastTimer(loop.max) }];
      loop.reset();
      send({ type: "phase", stats: phase });
      phase = fresh(m.name);
    } else {
      stopped = true;
      clearInterval(tick);
      void Promise.race([http.close(), sleep(2000)]).finally(() => process.exit(0));
    }
  });

  // registration paced by a bounded pool of workers; each registered agent starts at once, as a real one does
  let k = 0;
  await Promise.all(
    Array.from({ length: job.seeded ? job.count : job.concurrency }, async () => {
      while (k < job.count && !stopped) {
        const a = await register(job.first + k++ * job.stride);
        if (!a) continue;
        void polls(a);
      }
    }),
  );
  total = job.count - failed;
  send({ type: "registered", registered, failed });
  if (polled === total) send({ type: "polling" });
}

/** Starts a child process running `job` (this file, loaded through tsx as this process is); `onMessage` hears it. */
export function forkAgents(job: AgentsJob, onMessage: (m: FromAgents) => void): ChildProcess {
  const child = fork(fileURLToPath(import.meta.url), [JOB_FLAG, JSON.stringify(job)]);
  child.on("message", (m) => onMessage(m as FromAgents));
  return child;
}

if (process.argv[2] === JOB_FLAG && process.send) {
  const send = (m: FromAgents) => process.send!(m);
  await runAgents(JSON.parse(process.argv[3]!) as AgentsJob, send);
}
