// Per-shard engine logs in `<stateDir>/logs/<shardId>.log`. The engine writes to the file directly (O_APPEND), so
// its output does not depend on the agent being alive; the agent caps the size by copying the file to `.1` and
// truncating it in place (the engine's appends then continue at the new end).
import { copyFile, stat, truncate } from "node:fs/promises";
import { join } from "node:path";
import { fileSafe } from "./state-files.js";

/** The log file of a shard. */
export const logPath = (stateDir: string, shardId: string) => join(stateDir, "logs", `${fileSafe(shardId)}.log`);

/** Rotates the log once it exceeds `maxBytes`: one previous generation is kept as `<path>.1`. True when it rotated. */
export async function capLog(path: string, maxBytes: number): Promise<boolean> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    return false;
  }
  if (size <= maxBytes) return false;
  await copyFile(path, `${path}.1`);
  await truncate(path, 0);
  return true;
}
