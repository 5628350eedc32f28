// What bench/fleet.ts and its agent processes (bench/fleet-agents.ts) say to each other: the job a process runs, and
// what it reports back over IPC, per phase.

/**
 * Agents first, first + stride, … (count of them), registered `concurrency` at a time, over `origins` round-robin.
 * The processes take every stride-th node, so that the nodes a change moves (placement favours some over others) fall
 * to every process alike rather than all to one.
 */
export type AgentsJob = {
  origins: string[];
  adminToken: string;
  first: number;
  count: number;
  stride: number;
  concurrency: number;
  /** How long a new shard stays `starting` before it is reported `ready` (ms, uniform in the range). */
  readyMs: [number, number];
  /**
   * The nodes are in the database already (--preseed): no registration; each agent starts polling with its derived
   * token at a random point of the first `rampS` seconds, with serve's default poll wait and heartbeat interval.
   */
  seeded?: { rampS: number; pollWaitS: number; heartbeatS: number };
  /** Where to write a CPU profile of the changes (phases change1 and change2), one file per process. */
  cpuProfDir?: string;
};
/**
 * `shards`: an agent's poll answered with a different shard set (the deployments the new set holds); `ready`: its
 * report of new shards ready was answered (their deployments) — both when the agent saw it.
 */
export type Delivery = {
  kind: "shards" | "ready";
  node: string;
  at: number;
  deployments: string[];
  /** The instance whose answer it was (its index in the origins). */
  via: number;
};
/** Round trips (ms) of the calls that completed in one phase, and the failures by call and status or error code. */
export type PhaseStats = {
  name: string;
  register: number[];
  heartbeat: number[];
  status: number[];
  errors: Record<string, number>;
  /**
   * The agents' own event-loop delay in the phase, one per process (ms past a 10 ms timer): a stalled agent process
   * delays its calls' round trips as a slow API would.
   */
  loops: { p99: number; max: number }[];
};
export type FromAgents =
  | { type: "registered"; registered: number; failed: number }
  | { type: "polling" }
  | { type: "sample"; open: number; registered: number }
  | { type: "deliveries"; items: Delivery[] }
  | { type: "phase"; stats: PhaseStats };
export type ToAgents = { type: "phase"; name: string } | { type: "stop" };
