// How far serve's JavaScript heap grows past what the last full collection found live (LLMGW_HEAP_GROWTH_PERCENT).
// V8 on its own lets a heap that collects quickly grow to two to four times its live part before the next full
// collection: at 10,000 agents that is ~1.1 GiB of memory for ~300 MiB live. A bound on the growth keeps memory near
// what is live, for more (short) full collections — where a fixed heap limit would stop the process once the fleet's
// live heap outgrew it.
import v8 from "node:v8";

/** The V8 flag for `percent` (0: V8's own choice), or none where node was started with one of its own. */
export function heapGrowthFlag(percent: number, execArgv: readonly string[]): string | undefined {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent(=|$)/.test(a))) return undefined;
  return `--heap-growing-percent=${percent}`;
}

/** Applies the growth bound to this process's heap from its next full collection on. */
export function limitHeapGrowth(percent: number, execArgv: readonly string[] = process.execArgv): void {
  const flag = heapGrowthFlag(percent, execArgv);
  if (flag) v8.setFlagsFromString(flag);
}
