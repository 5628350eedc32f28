// The database handle type. No Node imports here: the Worker entry type-checks against this file.
import type { Client, InStatement } from "@libsql/client";
import { sql } from "drizzle-orm";
import type { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";
import { dbFailure, isStorageFailure } from "./db-errors.js";
import type * as schema from "./schema.js";
import type { ServerStreams } from "./server-streams.js";
import { MAX_BATCH, MAX_GROUP, MAX_WAITING, queueFull, WRITE_FAILURE_MS } from "./write-limits.js";

export type Db = LibSQLDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** Anything queries can run on: the database or an open transaction. */
export type Q = Db | Tx;

type Executor = { execute(stmt: InStatement): Promise<{ rowsAffected: number }> };
/** What drizzle's libsql session holds: the client, and the open transaction its statements run on, if any. */
type Session = { client: Executor; tx?: Executor };
/** Drizzle's session behind `q`. */
export const sessionOf = (q: Q) => (q as unknown as { session: Session }).session;

/** Runs `stmt` on `q` — the open transaction it holds, or the database — and returns the rows it changed. */
export async function runStatement(q: Q, stmt: InStatement): Promise<number> {
  const s = sessionOf(q);
  return (await (s.tx ?? s.client).execute(stmt)).rowsAffected;
}

/** The database plus the one way to write to it: a transaction, serialized in-process when the driver needs it. */
export type Store = {
  db: Db;
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Writes `stmts` in order in one transaction, with nothing read between them, and resolves with the rows each changed
   * once it committed. The calls made while one is on its way share the next transaction: on a server one batch, a
   * single round trip (a `write` is one per statement, all of them under SQLite's one write lock). For the agents'
   * frequent writes whose checks fit in a statement's WHERE. `stored`: from the rows each changed, the events they
   * stored (told to the onEvents listener once committed, as a transaction's are).
   */
  writeStatements(stmts: InStatement[], stored?: (rows: number[]) => WrittenEvent[]): Promise<number[]>;
  /**
   * Runs `fn` in this instance's turn to write, outside any transaction of its own: no write of this store runs until
   * it settles. For another connection of the same process writing (placement's thread) without racing this one for
   * the database's one write lock. Absent where writes do not take turns.
   */
  turn?<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Why writes fail though reads may work (a full disk, a read-only or damaged file): the last such failure when it
   * is under `WRITE_FAILURE_MS` old. Readiness reports it; absent where the store does not track it.
   */
  writeFailure?(): WriteFailure | undefined;
  /**
   * A write of this instance made on a connection of its own (the fleet thread's) that failed for the same reasons:
   * readiness reports it as one of this store's.
   */
  noteWriteFailure?(f: WriteFailure): void;
  /** Tells `listener` the events each write transaction stored, once it committed (the process log writes them). */
  onEvents?(listener: (events: WrittenEvent[]) => void): void;
  /**
   * A libSQL server rather than the embedded file: other instances may be writing to it, and its write lock is held
   * for a round trip per statement of a transaction.
   */
  server?: boolean;
};

/** Why writes fail though reads may work, and when one last did (ms). */
export type WriteFailure = { cause: string; at: number };

/** An event as a write stored it: what the log says of it. */
export type WrittenEvent = { type: string; nodeId: string | null; message: string; data?: Record<string, unknown> };

/** Events inserted in each open write transaction, by transaction (events.ts adds to it). */
export const txEvents = new WeakMap<object, WrittenEvent[]>();

const clientOf = (db: Db) => (db as unknown as { $client: Client }).$client;

/** One write waiting its turn, and what became of it in its transaction. */
type Job = {
  fn: (tx: Tx) => Promise<unknown>;
  done: (v: unknown) => void;
  fail: (e: unknown) => void;
  written: WrittenEvent[];
  /** What its own code threw (its writes rolled back), as opposed to the transaction failing around it. */
  thrown?: { e: unknown };
  value?: unknown;
  /** A turn (`Store.turn`): `fn` runs alone, with no transaction. */
  outside?: true;
};

/** A call of `writeStatements` waiting for its batch. */
type Batch = { stmts: InStatement[]; done: (rows: number[]) => void; fail: (e: unknown) => void };

/**
 * A Store over `db`. With `serialize` write transactions take turns; the writes that queued behind one commit
 * together in the next (group commit: one commit, one sync of the log, for a burst of heartbeats), each in a
 * savepoint of its own, so that one that throws rolls back alone and the others still commit. Without, each write is
 * a transaction of its own, at once (a Worker isolate, whose requests must not run each other's I/O). Each resolves
 * only once its transaction committed.
 *
 * A file database takes turns because its local driver is synchronous; a database server (sqld) because SQLite has
 * one writer anyway: transactions open at once wait for its lock inside the server, each holding one of its
 * connections (a thread of its own: past 4,096 threads sqld aborts), and grouped writes commit more per second. There
 * the statement writes' batches take turns with the transactions as well: an instance writes on one connection at a
 * time (sqld 0.24's default WAL can stop all writing for good once several connections wait for its lock).
 */
export function createStore(
  db: Db,
  o: { serialize: boolean; file: boolean; streams?: ServerStreams },
  now: () => number = Date.now,
): Store {
  const serialize = o.serialize;
  let failed: WriteFailure | undefined;
  let listener: ((events: WrittenEvent[]) => void) | undefined;
  const waiting: Job[] = [];
  let running = false;

  /** Keeps why writes fail when it is the storage's fault (readiness reports it). */
  const note = (e: unknown) => {
    const failure = dbFailure(e);
    if (failure && isStorageFailure(failure.kind)) failed = { cause: failure.cause, at: now() };
  };

  /** Runs `jobs` in one transaction; every job settles once it committed, or with why it did not. */
  async function runGroup(jobs: Job[]): Promise<void> {
    // what the body threw, before the driver's rollback could throw over it: SQLite rolls a transaction back itself on
    // some errors (SQLITE_FULL …), and a server may end it (sqld's TRANSACTION_TIMEOUT); the rollback then fails
    // ("no transaction is active", TRANSACTION_CLOSED), which says nothing of why
    let bodyError: { e: unknown } | undefined;
    const body = (tx: Tx) =>
      runJobs(tx).catch((e: unknown) => {
        bodyError = { e };
        throw e;
      });
    const runJobs = async (tx: Tx) => {
      for (const j of jobs) {
        txEvents.set(tx, j.written);
        // one job alone needs no savepoint: its error rolls the transaction back, as a transaction of its own would
        const alone = jobs.length === 1;
        if (!alone) await tx.run(sql.raw("savepoint job"));
        try {
          j.value = await j.fn(tx);
          if (!alone) await tx.run(sql.raw("release savepoint job"));
        } catch (e) {
          j.thrown = { e };
          if (alone) throw e;
          // a savepoint that cannot be rolled back to is gone with its transaction (a server that ended it for
          // holding the write lock too long): that throws, and the whole group fails with this job's error, rather
          // than run the jobs after it outside any transaction, where each statement would commit on its own
          await tx.run(sql.raw("rollback to savepoint job")).catch(() => {
            throw e;
          });
          await tx.run(sql.raw("release savepoint job"));
        }
      }
    };
    try {
      await db.transaction(body);
    } catch (outer) {
      const e = bodyError ? bodyError.e : outer;
      // a BEGIN that failed busy (another process holds the file's write lock) leaves its statement active on the
      // pooled connection, and every later COMMIT on it fails "SQL statements in progress" (@libsql/client 0.18.0's
      // local driver): start the pool's connections afresh, so that the caller's retry can succeed
      if (o.file && !jobs.some((j) => j.thrown) && /SQLITE_BUSY/.test(String(e))) clientOf(db).reconnect();
      note(e);
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

  /** A turn's job: its function, given no transaction. */
  const runTurn = (j: Job) => (j.fn as () => Promise<unknown>)().then(j.done, j.fail);

  function next() {
    if (running || sending || !waiting.length) return;
    running = true;
    // a group ends before the first turn in the queue; a turn runs alone
    const turnAt = waiting.findIndex((j) => j.outside);
    const take = turnAt === 0 ? 1 : Math.min(serialize ? MAX_GROUP : 1, turnAt < 0 ? waiting.length : turnAt);
    const jobs = waiting.splice(0, take);
    void (turnAt === 0 ? runTurn(jobs[0]!) : runGroup(jobs)).finally(() => {
      running = false;
      // the statement writes that waited for this transaction go first, then the writes queued behind it
      void flush();
      next();
    });
  }

  const batches: Batch[] = [];
  let sending = false;

  /**
   * The calls' statements as one write batch (one transaction on the server); the rows each call's changed. `kept`:
   * on the server's write stream kept open, rather than the client's stream of its own for the batch.
   */
  async function send(calls: InStatement[][], kept = false): Promise<number[][]> {
    const flat = calls.flat();
    const rows =
      kept && o.streams
        ? await o.streams.write(flat)
        : (await clientOf(db).batch(flat, "write")).map((r) => r.rowsAffected);
    let i = 0;
    return calls.map((stmts) => stmts.map(() => rows[i++]!));
  }

  /**
   * Sends the calls waiting, one batch at a time; a batch that fails is sent again call by call, so each gets its own
   * answer (through the client, whose errors callers know, where the batch went over the kept stream).
   */
  async function flush(): Promise<void> {
    if (sending || running || !batches.length) return;
    sending = true;
    const calls = batches.splice(0, MAX_BATCH);
    try {
      const rows = await send(
        calls.map((c) => c.stmts),
        true,
      );
      for (const [i, c] of calls.entries()) c.done(rows[i]!);
    } catch (e) {
      for (const c of calls) {
        await (calls.length === 1 && !o.streams ? Promise.reject(e) : send([c.stmts])).then(
          ([r]) => c.done(r!),
          (err: unknown) => {
            note(err);
            c.fail(err);
          },
        );
      }
    } finally {
      sending = false;
    }
    // the transactions that waited for this batch go first, then the statement writes queued behind it
    next();
    void flush();
  }

  const write = <T>(fn: (tx: Tx) => Promise<T>, outside?: true) =>
    new Promise<T>((done, fail) => {
      const job: Job = { fn, done: done as (v: unknown) => void, fail, written: [], ...(outside && { outside }) };
      if (!serialize) return void runGroup([job]);
      if (waiting.length >= MAX_WAITING) return fail(queueFull(waiting.length));
      waiting.push(job);
      next();
    });

  return {
    db,
    server: !o.file,
    onEvents: (l) => {
      listener = l;
    },
    write,
    ...(serialize && { turn: <T>(fn: () => Promise<T>) => write<T>(fn, true) }),
    async writeStatements(stmts, stored) {
      const rows = await writeBatch(stmts);
      const written = stored?.(rows);
      if (written?.length) listener?.(written);
      return rows;
    },
    writeFailure: () => (failed && now() - failed.at < WRITE_FAILURE_MS ? failed : undefined),
    noteWriteFailure: (f) => {
      if (!failed || f.at > failed.at) failed = f;
    },
  };

  /** Writes `stmts` in one transaction: with the others waiting on a server, else in the write queue. */
  function writeBatch(stmts: InStatement[]): Promise<number[]> {
    // the embedded file's driver is synchronous: its writes take their turns in the one queue
    if (o.file)
      return write(async (tx) => {
        const rows: number[] = [];
        for (const s of stmts) rows.push(await runStatement(tx, s));
        return rows;
      });
    if (!serialize)
      return send([stmts]).then(
        ([rows]) => rows!,
        (e: unknown) => {
          note(e);
          throw e;
        },
      );
    return new Promise((done, fail) => {
      if (batches.length >= MAX_WAITING) return fail(queueFull(batches.length));
      batches.push({ stmts, done, fail });
      void flush();
    });
  }
}
