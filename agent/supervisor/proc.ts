// Process identity from /proc: a pid alone can be recycled, so a process is "ours" only when its start time (in
// clock ticks since boot, field 22 of /proc/<pid>/stat) matches the one recorded when it was started.
import { readdirSync, readFileSync } from "node:fs";

export type ProcStat = { state: string; startTime: number; pgid: number };

/** Parses /proc/<pid>/stat text; the command name (field 2) may itself contain spaces and parentheses. */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const rest = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // rest[0] is field 3 (state), rest[2] field 5 (pgrp), rest[19] field 22 (starttime)
  const startTime = Number(rest[19]);
  const pgid = Number(rest[2]);
  if (!rest[0] || !Number.isInteger(startTime) || !Number.isInteger(pgid)) return undefined;
  return { state: rest[0], startTime, pgid };
}

/** The process's stat, or undefined when it does not exist (or /proc cannot be read). */
export function procStat(pid: number, root = "/proc"): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`${root}/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** True when `pid` runs and is the same process that started at `startTime` (a zombie counts as gone). */
export function isSameProcess(pid: number, startTime: number, root = "/proc"): boolean {
  const s = procStat(pid, root);
  return s !== undefined && s.state !== "Z" && s.state !== "X" && s.startTime === startTime;
}

/** Every pid whose process group is one of `groups` (engines lead their own group, and their workers stay in it). */
export function pidsInGroups(groups: ReadonlySet<number>, root = "/proc"): Set<number> {
  const out = new Set<number>(groups);
  if (!groups.size) return out;
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const s = procStat(Number(name), root);
    if (s && groups.has(s.pgid)) out.add(Number(name));
  }
  return out;
}
