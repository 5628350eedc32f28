// The database handle type. No Node imports here: the Worker entry type-checks against this file.
import type { Client } from "@libsql/client";
import type { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";
import { type DbFailure, dbFailure, isStorageFailure } from "./db-errors.js";
import type * as schema from "./schema.js";

export type Db = LibSQLDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** Anything queries can run on: the database or an open transaction. */
export type Q = Db | Tx;

/** The database plus the one way to write to it: a transaction, serialized in-process when the driver needs it. */
export type Store = {
  db: Db;
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Why writes fail though reads may work (a full disk, a read-only or damaged file): the last such failure when it
   * is under `WRITE_FAILURE_MS` old. Readiness reports it; absent where the store does not track it.
   */
  writeFailure?(): { cause: string; at: number } | undefined;
  /** Tells `listener` the events each write transaction stored, once it committed (the process log writes them). */
  onEvents?(listener: (events: WrittenEvent[]) => void): void;
};

/** An event as a write stored it: what the log says of it. */
export type WrittenEvent = { type: string; nodeId: string | null; message: string; data?: Record<string, unknown> };

/** Events inserted in each open write transaction, by transaction (events.ts adds to it). */
export const txEvents = new WeakMap<object, WrittenEvent[]>();

/** How long a write that failed for lack of space (or a read-only file) keeps the instance unready. */
export const WRITE_FAILURE_MS = 60_000;

const reconnect = (db: Db) => (db as unknown as { $client: Client }).$client.reconnect();

/** One write waiting its turn, and what became of it in its transaction. */
type Job = {
  fn: (tx: Tx) => Promise<unknown>;
  done: (v: unknown) => void;
  fail: (e: unknown) => void;
  written: WrittenEvent[];
  /** What its own code threw (its writes rolled back), as opposed to the transaction failing around it. */
  thrown?: { e: unknown };
  value?: unknown;
};

/** Writes that queue up behind a running one share the next transaction, at most this many. */
export const MAX_GROUP = 64;

/**
 * A Store over `db`. With `serialize` write transactions take turns; the writes that queued behind one commit
 * together in the next (group commit: one commit, one sync of the log, for a burst of heartbeats), each in a
 * savepoint of its own, so that one that throws rolls back alone and the others still commit. Without, each write is
 * a transaction of its own, at once (a Worker isolate, whose requests must not run each other's I/O). Each resolves
 * only once its transaction committed.
 *
 * A file database takes turns because its local driver is synchronous; a database server (sqld) because SQLite has
 * one writer anyway: transactions open at once wait for its lock inside the server, each holding one of its
 * connections (a thread of its own: past 4,096 threads sqld aborts), and grouped writes commit more per second.
 */
export function createStore(db: Db, o: { serialize: boolean; file: boolean }, now: () => number = Date.now): Store {
  const serialize = o.serialize;
  let failed: { failure: DbFailure; at: number } | undefined;
  let listener: ((events: WrittenEvent[]) => void) | undefined;
  const waiting: Job[] = [];
  let running = false;

  /** Runs `jobs` in one transaction; every job settles once it committed, or with why it did not. */
  async function runGroup(jobs: Job[]): Promise<void> {
    const body = async (tx: Tx) => {
      for (const j of jobs) {
        // one job alone needs no savepoint: its error rolls the transaction back, as a transaction of its own would
        const run = (q: Tx) => {
          txEvents.set(q, j.written);
          return j.fn(q);
        };
        try {
          j.value = jobs.length === 1 ? await run(tx) : await tx.transaction(run);
        } catch (e) {
          j.thrown = { e };
          if (jobs.length === 1) throw e;
        }
      }
    };
    try {
      await db.transaction(body);
    } catch (outer) {
      // SQLite rolls a transaction back itself on some errors (SQLITE_FULL …); the driver's own rollback then throws
      // TRANSACTION_CLOSED, which would hide the error that matters
      const e = jobs.find((j) => j.thrown)?.thrown?.e ?? outer;
      // a BEGIN that failed busy (another process holds the file's write lock) leaves its statement active on the
      // pooled connection, and every later COMMIT on it fails "SQL statements in progress" (@libsql/client 0.18.0's
      // local driver): start the pool's connections afresh, so that the caller's retry can succeed
      if (o.file && !jobs.some((j) => j.thrown) && /SQLITE_BUSY/.test(String(e))) reconnect(db);
      const failure = dbFailure(e);
      if (failure && isStorageFailure(failure.kind)) failed = { failure, at: now() };
      for (const j of jobs) j.fail(j.thrown ? j.thrown.e : e);
      return;
    }
    for (const j of jobs) {
      if (j.thrown) j.fail(j.thrown.e);
      else {
        if (j.written.length) listener?.(j.written);
        j.done(j.value);
      }
    }
  }

  function next() {
    if (running || !waiting.length) return;
    running = true;
    void runGroup(waiting.splice(0, serialize ? MAX_GROUP : 1)).finally(() => {
      running = false;
      next();
    });
  }

  return {
    db,
    onEvents: (l) => {
      listener = l;
    },
    write: <T>(fn: (tx: Tx) => Promise<T>) =>
      new Promise<T>((done, fail) => {
        const job: Job = { fn, done: done as (v: unknown) => void, fail, written: [] };
        if (!serialize) return void runGroup([job]);
        waiting.push(job);
        next();
      }),
    writeFailure: () =>
      failed && now() - failed.at < WRITE_FAILURE_MS ? { cause: failed.failure.cause, at: failed.at } : undefined,
  };
}
