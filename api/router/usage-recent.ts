// Recent usage per key, served model and 5-minute bucket (the console's charts): requests, errors, tokens and a
// time-to-first-token histogram, summed in memory beside the hourly usage and written in the same flush transaction,
// added to the rows already there (any number of instances write the same buckets). Old buckets are deleted there too.
import { lt, sql } from "drizzle-orm";
import { BUCKET_MS, RECENT_KEEP_MS, TTFT_BOUNDS_MS } from "../../shared/schemas/usage.js";
import type { Tx } from "../db/client.js";
import { usageRecent } from "../db/schema.js";
import { noTtft, type RecentRow, TTFT_COLUMNS } from "../db/usage-recent.js";
import type { Outcome } from "./types.js";

export type { RecentRow };

// 17 parameters a row: stays far below SQLite's limit on bound parameters
const ROWS_PER_STATEMENT = 200;

/** How often (at most) one instance's flush deletes old buckets. */
export const SWEEP_EVERY_MS = 10 * 60_000;

/** The histogram bucket a time to first token falls in (the last one: over every bound). */
export function ttftBucket(ms: number): number {
  const i = TTFT_BOUNDS_MS.findIndex((b) => ms <= b);
  return i < 0 ? TTFT_BOUNDS_MS.length : i;
}

const count = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

/**
 * The map key of a row of sums: its start (bucket or hour), key name and model (key names are resource names, with
 * no NUL, so the model, last, may hold anything).
 */
export const rowId = (start: number, key: string, model: string) => `${start}\0${key}\0${model}`;

/** Counts one request's outcome into its row (key, model, bucket) in `into`, in place: no row object per request. */
export function addOutcome(into: Map<string, RecentRow>, key: string, model: string, o: Outcome, now: number): void {
  const bucketStart = Math.floor(now / BUCKET_MS) * BUCKET_MS;
  const id = rowId(bucketStart, key, model);
  let row = into.get(id);
  if (!row) {
    row = {
      keyName: key,
      model,
      bucketStart,
      requests: 0,
      errors: 0,
      promptTokens: 0,
      completionTokens: 0,
      ...noTtft(),
    };
    into.set(id, row);
  }
  row.requests++;
  if (o.status >= 400 && o.status !== 499) row.errors++;
  row.promptTokens += count(o.usage?.promptTokens);
  row.completionTokens += count(o.usage?.completionTokens);
  if (o.ttftMs !== undefined && Number.isFinite(o.ttftMs)) row[TTFT_COLUMNS[ttftBucket(Math.max(0, o.ttftMs))]!]++;
}

/** Adds `row`'s sums into `into`. */
export function addRecent(into: Map<string, RecentRow>, row: RecentRow): void {
  const id = rowId(row.bucketStart, row.keyName, row.model);
  const had = into.get(id);
  if (!had) return void into.set(id, { ...row });
  had.requests += row.requests;
  had.errors += row.errors;
  had.promptTokens += row.promptTokens;
  had.completionTokens += row.completionTokens;
  for (const c of TTFT_COLUMNS) had[c] += row[c];
}

const added = (c: (typeof TTFT_COLUMNS)[number] | "requests" | "errors" | "promptTokens" | "completionTokens") =>
  sql`${usageRecent[c]} + excluded.${sql.identifier(usageRecent[c].name)}`;

/** Adds recent sums to the rows already there; with `sweepBefore`, deletes the buckets that start before it. */
export async function writeRecent(tx: Tx, rows: RecentRow[], sweepBefore?: number): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    await tx
      .insert(usageRecent)
      .values(rows.slice(i, i + ROWS_PER_STATEMENT))
      .onConflictDoUpdate({
        target: [usageRecent.keyName, usageRecent.model, usageRecent.bucketStart],
        set: Object.fromEntries(
          (["requests", "errors", "promptTokens", "completionTokens", ...TTFT_COLUMNS] as const).map((c) => [
            c,
            added(c),
          ]),
        ),
      });
  }
  if (sweepBefore !== undefined) await tx.delete(usageRecent).where(lt(usageRecent.bucketStart, sweepBefore));
}

/** The time before which buckets are deleted by a flush at `now`. */
export const sweepBefore = (now: number) => now - RECENT_KEEP_MS;
