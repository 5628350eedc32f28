// ShardRecord objects for the supervisor tests.
import type { ShardRecord } from "../../../agent/supervisor/state-files.js";
import { makeShard } from "../engines/shard.js";

/** A valid record of shard `shardId` (a single-node vLLM shard) with `over` applied. */
export function makeRecord(
  shardId: string,
  over: Partial<Omit<ShardRecord, "shard">> = {},
  shard: Parameters<typeof makeShard>[0] = {},
): ShardRecord {
  return {
    shard: makeShard({ shardId, ...shard }),
    pid: 4242,
    startTime: 1000,
    startedAt: 1_700_000_000_000,
    restarts: 0,
    state: "ready",
    ...over,
  };
}
