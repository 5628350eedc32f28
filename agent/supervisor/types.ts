// The supervisor's contract: what it needs from the outside (ops: start, stop, probe …), its settings, and the state
// it keeps per shard.
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { ShardState } from "../../shared/schemas/common.js";
import type { ShardFailure } from "../../shared/schemas/failure.js";
import type { ShardTransport } from "../../shared/schemas/transport.js";
import type { EngineAdapter, ProbeResult } from "../engines/types.js";
import type { createNcclReader } from "../nccl/parse.js";
import type { Backoff } from "./backoff.js";
import type { Exit, Spawned } from "./process.js";
import type { RunPolicy } from "./run-policy.js";

export type SupervisorOps = {
  launch(shard: StartShard): { argv: string[]; env: Record<string, string> };
  adapter(shard: StartShard): EngineAdapter;
  spawn(argv: string[], env: Record<string, string>, log: string): Promise<Spawned>;
  stop(pid: number, startTime: number, graceMs: number): Promise<void>;
  alive(pid: number, startTime: number): boolean;
  probe(port: number, path: string): Promise<ProbeResult>;
  /** Requests the shard's engine still works on (its own metrics, else the router's count); undefined: unknown. */
  inflight(shard: StartShard): Promise<number | undefined>;
  portFree(port: number): Promise<boolean>;
};

export type SupervisorOptions = {
  stateDir: string;
  restartLimit: number;
  restartBackoff: Backoff;
  stopGraceMs: number;
  drainTimeoutMs: number;
  adoptGraceMs: number;
  logMaxBytes: number;
  now: () => number;
  log: (line: string) => void;
  ops: SupervisorOps;
  /** What this node agrees to run (agent.yaml); a shard it refuses is failed with the reason, never spawned. */
  policy?: RunPolicy;
};

/** Where a shard's log is read up to; `done` once it was read with the engine serving (NCCL's init is over then). */
export type LogCursor = {
  reader: ReturnType<typeof createNcclReader>;
  offset: number;
  partial: string;
  done?: boolean;
};

/** One shard as the supervisor tracks it. */
export type Slot = {
  shard: StartShard;
  state: ShardState;
  message?: string;
  exitCode?: number;
  /** Why it last stopped unasked (sent with the report of that move only). */
  failure?: ShardFailure;
  pid?: number;
  startTime?: number;
  startedAt?: number;
  exited?: Exit;
  /** Failures so far; past the limit the shard stays failed. */
  failures: number;
  retryAt?: number;
  /** False for an adopted engine until a desired set names it. */
  claimed: boolean;
  unwantedSince?: number;
  /** It was ready since it started: a "not ready" answer now means unhealthy, not still loading. */
  served?: boolean;
  /** When it began answering "not ready" after it served. */
  unhealthySince?: number;
  stopping?: Promise<void>;
  /** What NCCL said it uses, judged against placement (shards that use NCCL), and where its log is read up to. */
  transport?: ShardTransport;
  cursor?: LogCursor;
};
