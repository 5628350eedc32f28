// Reading many rows without holding the event loop: on the embedded file every statement runs on it, so a fleet-sized
// read is made in parts by key, with a turn of the event loop between them.
import { nextTurn } from "../../shared/next-turn.js";

/**
 * Every row `read` gives, `part` at a time in the order of `key`: each call reads the rows after the last one's key
 * (undefined: from the start), at most `part`; a shorter part is the last.
 */
export async function readInParts<T>(
  part: number,
  key: (row: T) => string,
  read: (after: string | undefined) => Promise<T[]>,
): Promise<T[]> {
  const out: T[] = [];
  for (;;) {
    const last = out.at(-1);
    const rows = await read(last === undefined ? undefined : key(last));
    out.push(...rows);
    if (rows.length < part) return out;
    await nextTurn();
  }
}
