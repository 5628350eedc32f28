// The machine a benchmark ran on, printed with its figures.
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";

/** One line: CPU model and count, memory, Node version. */
export function machine(): string {
  const c = cpus();
  return `${c[0]?.model ?? "unknown CPU"} × ${c.length}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

type Ticks = { busy: number; steal: number; total: number };

/** /proc/stat's first line (`cpu user nice system idle iowait irq softirq steal …`, in clock ticks) as busy, steal and all. */
export function parseCpuLine(line: string): Ticks {
  // guest time is counted inside user and nice already
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busy, steal, total: busy + idle + iowait + steal };
}

/** The whole machine's CPU time so far (Linux; zeros where /proc/stat cannot be read). */
export function machineTicks(): Ticks {
  try {
    return parseCpuLine(readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!);
  } catch {
    return { busy: 0, steal: 0, total: 0 };
  }
}

/**
 * The machine's CPUs from `before` to `after`, in % of all their time: how busy they were, how much of that the
 * benchmark's own processes account for (`ourMs` of CPU over `wallMs`, on `cores` CPUs) and how much is not theirs —
 * other processes, and the kernel's own work for them (softirq: loopback traffic is not in a process's CPU time) —
 * and the share a hypervisor took (steal: time this VM's CPUs were ready while another guest ran). A noisy hour shows
 * here. `read`: the processes' share as their counters read it; `over`: that is more than the machine was busy by
 * over a point (a unit or timing error, shown rather than hidden; `ours` is then cut to the busy share). Undefined
 * when no time passed or the counters were not read at the start.
 */
export function cpuShares(before: Ticks, after: Ticks, ourMs: number, wallMs: number, cores: number) {
  const total = after.total - before.total;
  if (before.total <= 0 || total <= 0 || wallMs <= 0) return undefined;
  const busy = (100 * (after.busy - before.busy)) / total;
  const read = (100 * ourMs) / (wallMs * cores);
  const ours = Math.min(busy, read);
  const steal = (100 * (after.steal - before.steal)) / total;
  return { busy, ours, read, other: busy - ours, steal, over: read > busy + 1 };
}

/** cpuShares() from `before` to now, as one line. */
export function machineLine(before: Ticks, ourMs: number, wallMs: number): string {
  const cores = cpus().length;
  const s = cpuShares(before, machineTicks(), ourMs, wallMs, cores);
  if (!s) return "/proc/stat not readable";
  const f = (x: number) => `${x.toFixed(1)} %`;
  const ours = `${f(s.ours)}${s.over ? ` (its processes' counters read ${f(s.read)}: more than the machine)` : ""}`;
  return `${f(s.busy)} busy of ${cores} CPUs (this benchmark's processes ${ours}, not theirs ${f(s.other)}), steal ${f(s.steal)}`;
}
