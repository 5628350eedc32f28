// What the trace generators share: ids numbered in order of first appearance, timestamps scaled to an exact mean rate,
// and their flags' numbers checked.

/** A numbering of ids from 0 in order of first appearance, as in the published traces. */
export function firstSeenNumbering(): (id: number) => number {
  const renumber = new Map<number, number>();
  return (id) => {
    const n = renumber.get(id) ?? renumber.size;
    renumber.set(id, n);
    return n;
  };
}

/** The factor that makes `count` arrivals spread over `span` ms arrive at `rate` a second on average (1 for no span). */
export const rateScale = (count: number, span: number, rate: number): number =>
  span > 0 ? ((count - 1) * 1000) / rate / span : 1;

/** Flag `--flag`'s value `x` as a number (`dflt` when absent); throws with the flag's name when it is not one. */
export function flagNumber(flag: string, x: string | undefined, dflt: number, whole: boolean, min: number): number {
  const n = x === undefined ? dflt : Number(x);
  if (x?.trim() === "" || !Number.isFinite(n) || (whole && !Number.isInteger(n)) || n < min)
    throw new Error(`--${flag} wants a ${whole ? "whole " : ""}number from ${min} up, not ${JSON.stringify(x)}`);
  return n;
}
