// Per-shard engine logs in `<stateDir>/logs/<shardId>.log`. The engine writes to the file directly (O_APPEND), so
// its output does not depend on the agent being alive; the agent caps the size by copying the file to `.1` and
// truncating it in place (the engine's appends then continue at the new end).
import { copyFile, open, stat, truncate } from "node:fs/promises";
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

/** capLog on a shard's log; nothing for a shard id that cannot name a file (failed at its start, it has no log). */
export async function capShardLog(stateDir: string, shardId: string, maxBytes: number): Promise<void> {
  try {
    await capLog(logPath(stateDir, shardId), maxBytes);
  } catch {
    // nothing to cap
  }
}

/** Terminal colour and cursor sequences engines write to their logs. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[ -/]*[@-~]`, "g");

/**
 * The last `lines` lines of a log (read from its last `maxBytes`), colour codes removed, each cut to `width`; empty
 * when the file cannot be read. Carriage-return progress bars count as their last state.
 */
export async function readTail(path: string, lines: number, maxBytes = 16_384, width = 512): Promise<string[]> {
  let text: string;
  try {
    const f = await open(path, "r");
    try {
      const { size } = await f.stat();
      const from = Math.max(0, size - maxBytes);
      const buf = Buffer.alloc(size - from);
      await f.read(buf, 0, buf.length, from);
      text = buf.toString("utf8");
      // a partial first line (the read began inside it) is not shown
      if (from > 0) text = text.slice(text.indexOf("\n") + 1);
    } finally {
      await f.close();
    }
  } catch {
    return [];
  }
  return text
    .replace(ANSI, "")
    .split("\n")
    .map((l) => (l.split("\r").at(-1) ?? "").trimEnd())
    .filter((l) => l.length > 0)
    .slice(-lines)
    .map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
}
