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
 * benchmark's own processes account for (`ourMs` of CPU over `wallMs`, on `cores` CPUs; never more than the busy
 * share) and how much other work on the machine, and the share a hypervisor took (steal: time this VM's CPUs were
 * ready while another guest ran). A noisy hour shows here. Undefined when no time passed.
 */
export function cpuShares(before: Ticks, after: Ticks, ourMs: number, wallMs: number, cores: number) {
  const total = after.total - before.total;
  if (total <= 0 || wallMs <= 0) return undefined;
  const busy = (100 * (after.busy - before.busy)) / total;
  const ours = Math.min(busy, (100 * ourMs) / (wallMs * cores));
  return { busy, ours, other: busy - ours, steal: (100 * (after.steal - before.steal)) / total };
}

/** cpuShares() from `before` to now, as one line. */
export function machineLine(before: Ticks, ourMs: number, wallMs: number): string {
  const cores = cpus().length;
  const s = cpuShares(before, machineTicks(), ourMs, wallMs, cores);
  if (!s) return "/proc/stat not readable";
  const f = (x: number) => `${x.toFixed(1)} %`;
  return `${f(s.busy)} busy of ${cores} CPUs (this benchmark's processes ${f(s.ours)}, other work ${f(s.other)}), steal ${f(s.steal)}`;
}
