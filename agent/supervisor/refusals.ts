// Shards of the desired set that cannot run here at all (an id that cannot name a file, an answer the client could
// not read): reported failed once, while the control plane keeps sending them, and listed in every heartbeat.
import type { ShardReport } from "../../shared/schemas/agent.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import { fileSafe } from "./state-files.js";

/** A shard of the desired set that cannot run here at all, and why; its ids when a report can carry them. */
export type Refused = { shardId?: string; replicaId?: string; reason: string };

export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Why a shard id cannot be used here (it names the shard's state and log files), if it cannot. */
export function idRefusal(shardId: string): string | undefined {
  try {
    fileSafe(shardId);
    return undefined;
  } catch (e) {
    return errorText(e);
  }
}

/** The refusals of the latest desired set, by shard id (by reason when there is no usable id). */
export function createRefusals(o: { now: () => number; log: (line: string) => void }) {
  let known = new Map<string, { reason: string; report?: ShardReport }>();
  const refuse = (list: readonly Refused[]): ShardReport[] => {
    const next = new Map<string, { reason: string; report?: ShardReport }>();
    const fresh: ShardReport[] = [];
    for (const r of list) {
      const key = r.shardId ?? r.reason;
      const was = known.get(key);
      if (was?.reason === r.reason) {
        next.set(key, was);
        continue;
      }
      const message = `refused: ${r.reason}`.slice(0, 2048);
      o.log(`shard ${r.shardId ?? "(no usable id)"}: failed (${message})`);
      if (r.shardId === undefined) {
        next.set(key, { reason: r.reason });
        continue;
      }
      const report: ShardReport = {
        shardId: r.shardId,
        ...(r.replicaId ? { replicaId: r.replicaId } : {}),
        state: "failed",
        at: o.now(),
        message,
      };
      fresh.push(report);
      next.set(key, { reason: r.reason, report });
    }
    known = next;
    return fresh;
  };
  return {
    /**
     * A new desired set with the shards refused reading it (`refused`): the shards that may run (those whose id can
     * name a file), and the reports of refusals new or changed since the last set.
     */
    take(shards: StartShard[], refused: readonly Refused[]): { usable: StartShard[]; reports: ShardReport[] } {
      const unusable = [...refused];
      const usable = shards.filter((s) => {
        const why = idRefusal(s.shardId);
        if (why) unusable.push({ shardId: s.shardId, replicaId: s.replicaId, reason: why });
        return !why;
      });
      return { usable, reports: refuse(unusable) };
    },
    /** The refused shards' reports now, leaving out those a slot holds (`held`). */
    current(held: (shardId: string) => boolean): ShardReport[] {
      return [...known.values()].flatMap((r) =>
        r.report && !held(r.report.shardId) ? [{ ...r.report, at: o.now() }] : [],
      );
    },
  };
}
