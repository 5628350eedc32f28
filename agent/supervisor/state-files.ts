// Per-shard state files in `<stateDir>/shards/<shardId>.json`: what the agent needs to find its engines again after
// a restart (pid, process start time, spec, ports). Written atomically (temp file + rename).
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { StartShard } from "../../shared/schemas/assignment.js";
import { ShardState } from "../../shared/schemas/common.js";
import { ShardTransport } from "../../shared/schemas/transport.js";
import { z } from "../../shared/z.js";
import type { Slot } from "./types.js";

export const ShardRecord = z.object({
  shard: StartShard,
  pid: z.number().int().positive(),
  /** Process start time from /proc/<pid>/stat, in clock ticks since boot. */
  startTime: z.number().int().nonnegative(),
  /** When the process was started, Unix ms. */
  startedAt: z.number().int().nonnegative(),
  restarts: z.number().int().nonnegative(),
  state: ShardState,
  /** Set while an adopted engine is not in the control plane's desired set: it is stopped after a grace period. */
  unwantedSince: z.number().int().nonnegative().optional(),
  /** What its NCCL was found to use (agent/supervisor/transport.ts). */
  transport: ShardTransport.optional(),
});
export type ShardRecord = z.infer<typeof ShardRecord>;

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;
const dirOf = (stateDir: string) => join(stateDir, "shards");

/** A shard id checked to be usable as a file name (shard ids come from the control plane: anything odd is refused). */
export function fileSafe(shardId: string): string {
  if (!SAFE_ID.test(shardId) || shardId.startsWith("."))
    throw new Error(`shard id ${JSON.stringify(shardId)} cannot name a file`);
  return shardId;
}

/** The state file of a shard. */
export function recordPath(stateDir: string, shardId: string): string {
  return join(dirOf(stateDir), `${fileSafe(shardId)}.json`);
}

/** Writes a shard's record atomically. */
export async function writeRecord(stateDir: string, rec: ShardRecord): Promise<void> {
  const path = recordPath(stateDir, rec.shard.shardId);
  await mkdir(dirOf(stateDir), { recursive: true, mode: 0o700 });
  await writeFile(`${path}.tmp`, `${JSON.stringify(rec)}\n`, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}

/** Removes a shard's record (absent is fine). */
export async function removeRecord(stateDir: string, shardId: string): Promise<void> {
  await rm(recordPath(stateDir, shardId), { force: true });
}

/** Every readable record, and one line per file that is not a valid record (those files are left alone). */
export async function readRecords(stateDir: string): Promise<{ records: ShardRecord[]; problems: string[] }> {
  let names: string[];
  try {
    names = (await readdir(dirOf(stateDir))).filter((n) => n.endsWith(".json")).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { records: [], problems: [] };
    throw e;
  }
  const records: ShardRecord[] = [];
  const problems: string[] = [];
  for (const name of names) {
    const path = join(dirOf(stateDir), name);
    try {
      const r = ShardRecord.safeParse(JSON.parse(await readFile(path, "utf8")));
      if (r.success) records.push(r.data);
      else
        problems.push(
          `${path}: not a shard record (${r.error.issues[0]?.path.join(".")}: ${r.error.issues[0]?.message})`,
        );
    } catch (e) {
      problems.push(`${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { records, problems };
}

/** Keeps a slot's record while its engine runs (pid and start time known), else removes it. */
export function persistSlot(stateDir: string, s: Slot, now: number): Promise<void> {
  if (s.pid === undefined || s.startTime === undefined) return removeRecord(stateDir, s.shard.shardId);
  return writeRecord(stateDir, {
    shard: s.shard,
    pid: s.pid,
    startTime: s.startTime,
    startedAt: s.startedAt ?? now,
    restarts: s.failures,
    state: s.state,
    ...(s.unwantedSince !== undefined ? { unwantedSince: s.unwantedSince } : {}),
    ...(s.transport ? { transport: s.transport } : {}),
  });
}

/** The slot of an engine adopted from its record: not claimed until a desired set names it. */
export function slotOf(r: ShardRecord): Slot {
  return {
    shard: r.shard,
    state: r.state,
    pid: r.pid,
    startTime: r.startTime,
    startedAt: r.startedAt,
    failures: r.restarts,
    claimed: false,
    unwantedSince: r.unwantedSince,
    served: r.state === "ready",
    transport: r.transport,
  };
}
