// What the agent says when an engine stops without being asked: the cause, how long it ran, which restart this is
// and its log's last lines (shared/schemas/failure.ts). Pure; the log is read by the caller.
import type { ShardFailure } from "../../shared/schemas/failure.js";
import type { Exit } from "./process.js";

/** Why an engine stopped, before the counts are known. */
export type FailureCause = { reason: string; exitCode?: number; signal?: string };

/** The cause of an exit as people read it: `exit 1`, `killed by SIGKILL`; a vanished process says so. */
export function exitCause(e: Exit | undefined, pid: number | undefined): FailureCause {
  if (!e) return { reason: `engine process ${pid ?? "?"} is gone` };
  if (e.signal) return { reason: `killed by ${e.signal}`, signal: e.signal };
  if (e.exitCode !== null) return { reason: `exit ${e.exitCode}`, exitCode: e.exitCode };
  return { reason: e.message };
}

/**
 * The failure record for a cause: `restart` is the failures in a row so far (0: it could not be started, and is not
 * retried), past `limit` it gave up.
 */
export function shardFailure(
  cause: FailureCause,
  o: { startedAt?: number | undefined; now: number; restart: number; limit: number; logTail?: string[] },
): ShardFailure {
  return {
    ...cause,
    ...(o.startedAt !== undefined ? { ranS: Math.max(0, Math.round((o.now - o.startedAt) / 1000)) } : {}),
    restart: Math.min(o.restart, o.limit),
    restartLimit: o.limit,
    gaveUp: o.restart === 0 || o.restart > o.limit,
    logTail: o.logTail ?? [],
    at: o.now,
  };
}
