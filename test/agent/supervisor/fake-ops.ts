// An in-memory fake of the supervisor's side effects (processes, ports, probes) and a clock the test advances.
import type { EngineAdapter, ProbeResult } from "../../../agent/engines/types.js";
import type { Exit } from "../../../agent/supervisor/process.js";
import { createSupervisor } from "../../../agent/supervisor/reconcile.js";
import type { ShardRecord } from "../../../agent/supervisor/state-files.js";
import type { SupervisorOptions } from "../../../agent/supervisor/types.js";

export type FakeEngine = {
  pid: number;
  startTime: number;
  port: number;
  argv: string[];
  log: string;
  alive: boolean;
  exited: Promise<Exit>;
  exit: (e: Exit) => void;
};

/** 200 is ready, 503 or no answer is loading, any other status is dead; ranks > 0 serve no HTTP. */
export const fakeAdapter: EngineAdapter = {
  engine: "vllm",
  capabilities: { multiNode: true, mig: true, vulkan: false },
  argv: () => ["fake"],
  healthPath: (s) => (s.rank > 0 ? null : "/health"),
  readiness: (r) => (r.kind !== "status" || r.status === 503 ? "loading" : r.status === 200 ? "ready" : "dead"),
  version: [["fake", "--version"]],
};

export const PROBE = {
  refused: { kind: "refused" },
  loading: { kind: "status", status: 503, body: "" },
  ok: { kind: "status", status: 200, body: "" },
  broken: { kind: "status", status: 500, body: "Internal Server Error" },
} satisfies Record<string, ProbeResult>;

export type World = ReturnType<typeof fakeWorld>;

/** The fake node: engines by pid, probe answers and in-flight counts by port, ports held by other programs. */
export function fakeWorld() {
  let nextPid = 5000;
  const w = {
    clock: 1_000_000,
    engines: [] as FakeEngine[],
    /** pids `stop` was called for, in order. */
    stops: [] as number[],
    probes: new Map<number, ProbeResult>(),
    inflight: (_port: number): number | undefined => undefined,
    busyPorts: new Set<number>(),
    launchError: undefined as string | undefined,
    stopError: undefined as string | undefined,
    lines: [] as string[],
    /** Starts an engine the way spawn does (also for one "left by an earlier agent"). */
    engine(port: number, argv: string[] = ["earlier"], log = ""): FakeEngine {
      const pid = nextPid++;
      let exit!: (e: Exit) => void;
      const exited = new Promise<Exit>((ok) => (exit = ok));
      const e: FakeEngine = {
        pid,
        startTime: pid * 10,
        port,
        argv,
        log,
        alive: true,
        exited,
        exit: (x) => {
          e.alive = false;
          exit(x);
        },
      };
      w.engines.push(e);
      return e;
    },
    live: () => w.engines.filter((e) => e.alive),
    advance(ms: number) {
      w.clock += ms;
    },
  };
  const find = (pid: number, startTime: number) => w.engines.find((e) => e.pid === pid && e.startTime === startTime);
  const ops: SupervisorOptions["ops"] = {
    launch(shard) {
      if (w.launchError) throw new Error(w.launchError);
      return {
        argv: ["vllm", "serve", shard.model, "--port", String(shard.httpPort)],
        env: { CUDA_VISIBLE_DEVICES: shard.visibleDevices },
      };
    },
    adapter: () => fakeAdapter,
    async spawn(argv, _env, log) {
      const e = w.engine(Number(argv[argv.indexOf("--port") + 1]), argv, log);
      return { pid: e.pid, startTime: e.startTime, exited: e.exited };
    },
    async stop(pid, startTime) {
      w.stops.push(pid);
      if (w.stopError) throw new Error(w.stopError);
      const e = find(pid, startTime);
      if (e) e.alive = false;
    },
    alive: (pid, startTime) => find(pid, startTime)?.alive ?? false,
    probe: async (port) => w.probes.get(port) ?? PROBE.refused,
    inflight: async (shard) => w.inflight(shard.httpPort),
    // a port is taken while a live engine or another program holds it
    portFree: async (port) => !w.busyPorts.has(port) && !w.live().some((e) => e.port === port),
  };
  return Object.assign(w, { ops });
}

/** A supervisor over the fake world, writing its state files under `stateDir`. */
export function fakeSupervisor(
  stateDir: string,
  w: World = fakeWorld(),
  over: Partial<Omit<SupervisorOptions, "ops" | "now" | "log" | "stateDir">> = {},
  records: ShardRecord[] = [],
) {
  return createSupervisor(
    {
      stateDir,
      restartLimit: 2,
      restartBackoff: { baseMs: 1000, maxMs: 8000 },
      stopGraceMs: 10,
      drainTimeoutMs: 60_000,
      adoptGraceMs: 120_000,
      logMaxBytes: 1 << 20,
      now: () => w.clock,
      log: (l) => w.lines.push(l),
      ops: w.ops,
      ...over,
    },
    records,
  );
}
