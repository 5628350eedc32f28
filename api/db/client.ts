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

/**
 * A FIFO for write transactions. The embedded file driver is synchronous: two overlapping write
 * transactions in one process fail with SQLITE_BUSY or stall the event loop (the local driver is synchronous).
 */
export function createWriteQueue(): <T>(job: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(job: () => Promise<T>) => {
    const run = tail.then(job, job);
    tail = run.catch(() => undefined);
    return run;
  };
}

const reconnect = (db: Db) => (db as unknown as { $client: Client }).$client.reconnect();

/** A Store over `db`; `serialize` makes write transactions take turns (file databases). */
export function createStore(db: Db, serialize: boolean, now: () => number = Date.now): Store {
  const enqueue = serialize ? createWriteQueue() : <T>(job: () => Promise<T>) => job();
  let failed: { failure: DbFailure; at: number } | undefined;
  let listener: ((events: WrittenEvent[]) => void) | undefined;
  return {
    db,
    onEvents: (l) => {
      listener = l;
    },
    write: <T>(fn: (tx: Tx) => Promise<T>) => {
      // SQLite rolls a transaction back itself on some errors (SQLITE_FULL …); the driver's own rollback then throws
      // TRANSACTION_CLOSED, which would hide the error that matters
      let thrown: { e: unknown } | undefined;
      let written: WrittenEvent[] = [];
      const body = (tx: Tx) => {
        written = [];
        txEvents.set(tx, written);
        return fn(tx).catch((e: unknown) => {
          thrown = { e };
          throw e;
        });
      };
      return enqueue(() => db.transaction(body)).then(
        (v) => {
          if (written.length) listener?.(written);
          return v;
        },
        (outer: unknown) => {
          const e = thrown ? thrown.e : outer;
          // a BEGIN that failed busy (another process holds the file's write lock) leaves its statement active on the
          // pooled connection, and every later COMMIT on it fails "SQL statements in progress" (@libsql/client
          // 0.18.0's local driver): start the pool's connections afresh, so that the caller's retry can succeed
          if (serialize && !thrown && /SQLITE_BUSY/.test(String(e))) reconnect(db);
          const failure = dbFailure(e);
          if (failure && isStorageFailure(failure.kind)) failed = { failure, at: now() };
          throw e;
        },
      );
    },
    writeFailure: () =>
      failed && now() - failed.at < WRITE_FAILURE_MS ? { cause: failed.failure.cause, at: failed.at } : undefined,
  };
}
