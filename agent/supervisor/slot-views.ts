// What the agent tells the control plane about a slot: its report (a move, or its state in a heartbeat) and, while
// its engine runs, the running shard registration lists.
import type { ShardReport } from "../../shared/schemas/agent.js";
import type { RunningShard } from "../../shared/schemas/inventory.js";
import { runningShard } from "./adopt.js";
import type { Slot } from "./types.js";

/** The slot's report at `at`; `move` adds the exit code and failure of the move that made it (heartbeats leave them). */
export function reportOf(s: Slot, at: number, move = false): ShardReport {
  return {
    shardId: s.shard.shardId,
    replicaId: s.shard.replicaId,
    state: s.state,
    at,
    ...(s.message ? { message: s.message.slice(0, 2048) } : {}),
    ...(s.transport ? { transport: s.transport } : {}),
    ...(move && s.exitCode !== undefined ? { exitCode: s.exitCode } : {}),
    ...(move && s.failure ? { failure: s.failure } : {}),
  };
}

/** The slot as a running engine, when one runs. */
export function runningOf(s: Slot): RunningShard[] {
  if (s.pid === undefined || s.startTime === undefined) return [];
  return [
    runningShard({
      shard: s.shard,
      pid: s.pid,
      startTime: s.startTime,
      startedAt: s.startedAt ?? 0,
      restarts: s.failures,
      state: s.state,
      ...(s.transport ? { transport: s.transport } : {}),
    }),
  ];
}

/** Flags whose value is a secret (an engine's --api-key, a hub token …), as engines spell them. */
const SECRET_FLAG = /^--?([\w-]*[-_])?(key|token|secret|password|passwd)$/i;

/** A command line as the log and reports show it: the value of a secret-bearing flag is `***`. */
export function redactArgv(argv: readonly string[]): string[] {
  return argv.map((a, i) => {
    const eq = a.indexOf("=");
    if (a.startsWith("-") && eq > 0 && SECRET_FLAG.test(a.slice(0, eq))) return `${a.slice(0, eq)}=***`;
    return i > 0 && SECRET_FLAG.test(argv[i - 1]!) && !argv[i - 1]!.includes("=") ? "***" : a;
  });
}

/** Why `s` must wait to start: another engine of this node's still runs on its HTTP port (it is being stopped). */
export function portWait(slots: Iterable<Slot>, s: Slot): string | undefined {
  for (const x of slots)
    if (x !== s && x.pid !== undefined && x.shard.httpPort === s.shard.httpPort)
      return `waiting for port ${s.shard.httpPort}: shard ${x.shard.shardId} still runs on it`;
  return undefined;
}
