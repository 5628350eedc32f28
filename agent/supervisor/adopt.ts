// Adoption at agent start: engines from the state dir whose pid still runs with the recorded start time are kept
// (a recycled pid never is); the records of the others are removed.
import type { RunningShard } from "../../shared/schemas/inventory.js";
import { isSameProcess } from "./proc.js";
import { readRecords, removeRecord, type ShardRecord } from "./state-files.js";

export type Adopted = { alive: ShardRecord[]; gone: ShardRecord[]; problems: string[] };

/** Reads the state dir and splits its records into live engines and gone ones (whose records it removes). */
export async function adoptFromStateDir(
  stateDir: string,
  alive: (pid: number, startTime: number) => boolean = isSameProcess,
): Promise<Adopted> {
  const { records, problems } = await readRecords(stateDir);
  const out: Adopted = { alive: [], gone: [], problems };
  for (const r of records) {
    if (alive(r.pid, r.startTime)) out.alive.push(r);
    else {
      out.gone.push(r);
      await removeRecord(stateDir, r.shard.shardId);
    }
  }
  return out;
}

/** How a shard is reported at registration so the control plane can adopt it. */
export function runningShard(r: ShardRecord, state = r.state): RunningShard {
  return {
    shardId: r.shard.shardId,
    replicaId: r.shard.replicaId,
    rank: r.shard.rank,
    state,
    fingerprint: r.shard.fingerprint,
    httpPort: r.shard.httpPort,
    pid: r.pid,
    startedAt: r.startedAt,
    spec: r.shard,
    ...(r.transport ? { transport: r.transport } : {}),
  };
}
