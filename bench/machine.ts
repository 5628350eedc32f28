// The machine a benchmark ran on, printed with its figures.
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
