// Recent usage rows (5-minute buckets per key and served model): their time-to-first-token columns in histogram order,
// and the one read the console's charts make.
import { asc, gte } from "drizzle-orm";
import type { Q } from "./client.js";
import { usageRecent } from "./schema.js";

export type RecentRow = typeof usageRecent.$inferSelect;

/** The time-to-first-token columns, one per bound of TTFT_BOUNDS_MS and the last for what took longer. */
export const TTFT_COLUMNS = [
  "ttft0",
  "ttft1",
  "ttft2",
  "ttft3",
  "ttft4",
  "ttft5",
  "ttft6",
  "ttft7",
  "ttft8",
  "ttft9",
] as const satisfies readonly (keyof RecentRow)[];

/** Every time-to-first-token column at 0: a histogram with nothing in it. */
export const noTtft = () =>
  Object.fromEntries(TTFT_COLUMNS.map((c) => [c, 0])) as Record<(typeof TTFT_COLUMNS)[number], number>;

/** The recent usage rows of buckets that start at or after `since`, oldest first. */
export function readRecentUsage(q: Q, since: number): Promise<RecentRow[]> {
  return q
    .select()
    .from(usageRecent)
    .where(gte(usageRecent.bucketStart, since))
    .orderBy(asc(usageRecent.bucketStart), asc(usageRecent.keyName), asc(usageRecent.model));
}
