// Token usage per key, served model and hour: summed in memory as responses finish and written in one write
// transaction per flush (every `flushMs`, and on close), never one write per request. Rows are added to, so any number
// of instances can write the same hour. What an instance has not flushed yet is lost if it dies (at most `flushMs`).
import { sql } from "drizzle-orm";
import { HOUR_MS } from "../../shared/schemas/usage.js";
import type { Store, Tx } from "../db/client.js";
import { usage } from "../db/schema.js";
import type { Log } from "../log.js";
import type { Outcome, Usage, UsageRecorder } from "./types.js";
import {
  addOutcome,
  addRecent,
  type RecentRow,
  rowId,
  SWEEP_EVERY_MS,
  sweepBefore,
  writeRecent,
} from "./usage-recent.js";

export const DEFAULT_USAGE_FLUSH_MS = 10_000;
// rows per INSERT statement: 6 parameters each stays far below SQLite's limit on bound parameters
const ROWS_PER_STATEMENT = 500;

type Row = typeof usage.$inferSelect;

/** A token count as stored: a whole number, never negative (0 for anything else). */
const tokens = (n: number) => (Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

export type UsageWriter = UsageRecorder & {
  /** Rows (key, model, hour; and key, model, 5-minute bucket) waiting to be written. */
  pending(): number;
  /** Stops the timer and writes what is pending (once; logs what could not be written). */
  close(): Promise<void>;
};

/** Adds `row`'s sums into `into`. */
function add(into: Map<string, Row>, row: Row): void {
  const id = rowId(row.hourStart, row.keyName, row.model);
  const had = into.get(id);
  if (!had) into.set(id, { ...row });
  else {
    had.requests += row.requests;
    had.promptTokens += row.promptTokens;
    had.completionTokens += row.completionTokens;
  }
}

/** Writes sums into the usage table in one transaction, adding to the rows already there. */
export async function writeUsage(store: Store, rows: Row[]): Promise<void> {
  await store.write((tx) => writeHourly(tx, rows));
}

/** Adds hourly sums to the usage rows already there. */
async function writeHourly(tx: Tx, rows: Row[]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    await tx
      .insert(usage)
      .values(rows.slice(i, i + ROWS_PER_STATEMENT))
      .onConflictDoUpdate({
        target: [usage.keyName, usage.model, usage.hourStart],
        set: {
          requests: sql`${usage.requests} + excluded.requests`,
          promptTokens: sql`${usage.promptTokens} + excluded.prompt_tokens`,
          completionTokens: sql`${usage.completionTokens} + excluded.completion_tokens`,
        },
      });
  }
}

/**
 * A usage recorder for this instance; its timer does not keep the process alive (`flushMs: 0`: no timer, flush by
 * hand).
 */
export function createUsageRecorder(store: Store, o: { flushMs?: number; log: Log }): UsageWriter {
  let sums = new Map<string, Row>();
  let recent = new Map<string, RecentRow>();
  // the latest time a request was recorded at, and when this instance last deleted old recent buckets
  let latest = 0;
  let swept = 0;
  let writing: Promise<void> = Promise.resolve();
  let closed = false;

  /** Writes what is pending now; on failure the sums go back, to be written by the next flush. */
  const writeNow = async (last: boolean): Promise<void> => {
    if (!sums.size && !recent.size) return;
    const batch = sums;
    const recentBatch = recent;
    sums = new Map();
    recent = new Map();
    const sweep = latest - swept >= SWEEP_EVERY_MS ? latest : undefined;
    try {
      await store.write(async (tx) => {
        await writeHourly(tx, [...batch.values()]);
        await writeRecent(tx, [...recentBatch.values()], sweep === undefined ? undefined : sweepBefore(sweep));
      });
      if (sweep !== undefined) swept = sweep;
    } catch (e) {
      for (const row of batch.values()) add(sums, row);
      for (const row of recentBatch.values()) addRecent(recent, row);
      const rows = sums.size + recent.size;
      const error = e instanceof Error ? e.message : String(e);
      if (last) o.log.error("router: usage not written at shutdown; it is lost", { rows, error });
      else o.log.warn("router: usage flush failed; kept for the next one", { rows, error });
      throw e;
    }
  };
  // flushes take turns: one transaction at a time, each with what was pending when it began
  const flush = (last = false) => (writing = writing.catch(() => undefined).then(() => writeNow(last)));

  const every = o.flushMs ?? DEFAULT_USAGE_FLUSH_MS;
  const timer = every > 0 ? setInterval(() => void flush().catch(() => undefined), every) : undefined;
  timer?.unref?.();

  return {
    record(key: string, model: string, u: Usage, now: number) {
      const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS;
      const id = rowId(hourStart, key, model);
      let row = sums.get(id);
      if (!row) {
        row = { keyName: key, model, hourStart, requests: 0, promptTokens: 0, completionTokens: 0 };
        sums.set(id, row);
      }
      row.requests++;
      row.promptTokens += tokens(u.promptTokens);
      row.completionTokens += tokens(u.completionTokens);
    },
    observe(key: string, model: string, outcome: Outcome, now: number) {
      if (now > latest) latest = now;
      addOutcome(recent, key, model, outcome, now);
    },
    flush: () => flush(),
    pending: () => sums.size + recent.size,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await flush(true).catch(() => undefined);
    },
  };
}
