// The database handle type. No Node imports here: the Worker entry type-checks against this file.
import type { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";
import type * as schema from "./schema.js";

export type Db = LibSQLDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** Anything queries can run on: the database or an open transaction. */
export type Q = Db | Tx;

/** The database plus the one way to write to it: a transaction, serialized in-process when the driver needs it. */
export type Store = {
  db: Db;
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
};

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

/** A Store over `db`; `serialize` makes write transactions take turns (file databases). */
export function createStore(db: Db, serialize: boolean): Store {
  const enqueue = serialize ? createWriteQueue() : <T>(job: () => Promise<T>) => job();
  return { db, write: (fn) => enqueue(() => db.transaction(fn)) };
}
