// What the supervisor must do to turn the running set into the desired one: a pure comparison by shard id and
// profile fingerprint.
import type { StartShard } from "../../shared/schemas/assignment.js";

export type RunningRef = { shardId: string; fingerprint: string };

export type ShardDiff = {
  /** Desired shards not running: start them. */
  start: StartShard[];
  /** Running shards not desired: stop them. */
  stop: string[];
  /** Desired shards running with another fingerprint: stop the old process, then start this spec. */
  replace: StartShard[];
  /** Desired shards already running as specified. */
  keep: string[];
};

/** Compares desired and running shards; each output list keeps the order of its input. */
export function diffShards(desired: readonly StartShard[], running: readonly RunningRef[]): ShardDiff {
  const want = new Map(desired.map((s) => [s.shardId, s]));
  const have = new Map(running.map((r) => [r.shardId, r]));
  const out: ShardDiff = { start: [], stop: [], replace: [], keep: [] };
  for (const s of want.values()) {
    const r = have.get(s.shardId);
    if (!r) out.start.push(s);
    else if (r.fingerprint !== s.fingerprint) out.replace.push(s);
    else out.keep.push(s.shardId);
  }
  for (const r of running) if (!want.has(r.shardId)) out.stop.push(r.shardId);
  return out;
}
