// Reads on a libSQL server, in batches. Each statement the client runs outside a transaction is a stream of its own,
// which the server opens and closes around it — a connection of its own in sqld: ~350 µs of sqld's CPU for a read of
// one row on a 2-core machine, against ~45 µs each for reads that share a batch of 16. At fleet size every poll reads
// a few rows; the reads that requests start in one turn of the event loop go to the server together, as one read-only
// batch. No Node imports: the module is the database's, not the process's.
import type { Client, InArgs, InStatement, ResultSet } from "@libsql/client";
import { type ServerStreams, serverStreams, wsTarget } from "./server-streams.js";

/** Reads sent in one batch at most; more wait for the next. */
export const MAX_READ_BATCH = 64;

type Read = { stmt: InStatement; done: (r: ResultSet) => void; fail: (e: unknown) => void };

const SELECT = /^\s*select\b/i;

/** The statement `execute(stmtOrSql, args)` runs, as one value. */
function statementOf(stmtOrSql: InStatement | string, args?: InArgs): InStatement {
  if (typeof stmtOrSql !== "string") return stmtOrSql;
  return args === undefined ? stmtOrSql : { sql: stmtOrSql, args };
}

const sqlOf = (s: InStatement) => (typeof s === "string" ? s : s.sql);

/**
 * `client`, with the SELECTs run outside transactions gathered into read-only batches: those asked for in the same turn
 * of the event loop (`defer` schedules the send: setImmediate in Node) go in one, up to MAX_READ_BATCH. A batch that
 * fails runs its reads again one by one, so that each caller gets its own result or error. Everything else — writes,
 * batches, transactions — goes to `client` as it is. With `streams` the batches go over streams kept open (each read
 * on its own there), and a read that fails there runs again through `client`.
 */
export function batchingReads(client: Client, defer: (send: () => void) => void, streams?: ServerStreams): Client {
  const queued: Read[] = [];

  const one = (r: Read) => client.execute(r.stmt).then(r.done, r.fail);

  function send() {
    const reads = queued.splice(0, MAX_READ_BATCH);
    if (queued.length) defer(send);
    if (streams)
      return void streams.reads(reads.map((r) => r.stmt)).then(
        (results) => {
          for (const [i, r] of reads.entries()) {
            const result = results[i];
            if (result) r.done(result);
            else one(r);
          }
        },
        () => {
          for (const r of reads) one(r);
        },
      );
    if (reads.length === 1) return void one(reads[0]!);
    const stmts = reads.map((r) => r.stmt);
    client.batch(stmts, "read").then(
      (results) => {
        for (const [i, r] of reads.entries()) r.done(results[i]!);
      },
      () => {
        for (const r of reads) one(r);
      },
    );
  }

  function execute(stmtOrSql: InStatement | string, args?: InArgs): Promise<ResultSet> {
    const stmt = statementOf(stmtOrSql, args);
    if (!SELECT.test(sqlOf(stmt))) return client.execute(stmt);
    return new Promise((done, fail) => {
      if (!queued.length) defer(send);
      queued.push({ stmt, done, fail });
    });
  }

  return new Proxy(client, {
    get(target, prop) {
      if (prop === "execute") return execute;
      if (prop === "close" && streams)
        return () => {
          streams.close();
          target.close();
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/**
 * `client` of the libSQL server at `url`, as an instance uses it: its reads batched, and over WebSocket on streams kept
 * open — `streams`, which the store's statement writes use too (undefined over HTTP).
 */
export function serverClient(
  client: Client,
  url: string,
  authToken: string | undefined,
  defer: (send: () => void) => void,
): { client: Client; streams?: ServerStreams } {
  const target = wsTarget(url, authToken);
  const streams = target ? serverStreams(target) : undefined;
  return { client: batchingReads(client, defer, streams), streams };
}
