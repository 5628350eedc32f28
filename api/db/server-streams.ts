// Reads and the agents' statement writes on a libSQL server over WebSocket, on streams kept open. @libsql/client opens
// a stream for every statement or batch it runs outside a transaction, and sqld opens a connection of its own for each
// stream and closes it after: most of sqld's CPU for a read of one row (~330 µs, against ~65 µs on one of four streams
// kept open; a one-statement write batch ~590 µs against ~240 µs — this machine, 32 callers). These streams live as
// long as their WebSocket; one that fails is dropped with its connection, and the next call opens them again. Callers
// run again through the library whatever fails here, so that errors reach them as the library reports them.
// No Node imports: the module is the database's, not the process's.
import type { InStatement, ResultSet } from "@libsql/client";
import { BatchCond, type InStmt, openWs, type RowsResult, type WsClient, type WsStream } from "@libsql/hrana-client";

/** Streams that reads are spread over (sqld runs one stream's requests in turn). */
const READ_STREAMS = 4;

export type ServerStreams = {
  /** Runs each of `stmts` on its own (autocommit) on one read stream: each its result, or undefined where it failed. */
  reads(stmts: InStatement[]): Promise<(ResultSet | undefined)[]>;
  /** Runs `stmts` in one write transaction (BEGIN IMMEDIATE … COMMIT, in one request); the rows each changed. */
  write(stmts: InStatement[]): Promise<number[]>;
  close(): void;
};

/**
 * The WebSocket URL and token @libsql/client would use for `url`, or undefined where it speaks HTTP (or files):
 * `libsql:` is `wss:`, or `ws:` with `?tls=0`; `?authToken=` in the URL stands for the token.
 */
export function wsTarget(url: string, authToken?: string): { url: string; authToken?: string } | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const scheme = u.protocol.slice(0, -1);
  const tls = u.searchParams.get("tls");
  const ws = scheme === "libsql" ? (tls === "0" ? "ws" : "wss") : scheme;
  if (ws !== "ws" && ws !== "wss") return undefined;
  const token = authToken ?? u.searchParams.get("authToken") ?? undefined;
  u.searchParams.delete("tls");
  u.searchParams.delete("authToken");
  const query = u.searchParams.toString();
  return {
    url: `${ws}://${u.host}${u.pathname === "/" ? "" : u.pathname}${query ? `?${query}` : ""}`,
    authToken: token,
  };
}

/** The statement as hrana takes it. */
const hranaStmt = (s: InStatement): InStmt => (typeof s === "string" ? s : [s.sql, s.args as never]);

/** A hrana result as @libsql/client returns it (drizzle reads `rows`; writes read `rowsAffected`). */
function resultSet(r: RowsResult): ResultSet {
  const columns = r.columnNames.map((c) => c ?? "");
  const columnTypes = r.columnDecltypes.map((c) => c ?? "");
  return {
    columns,
    columnTypes,
    rows: r.rows,
    rowsAffected: r.affectedRowCount,
    lastInsertRowid: r.lastInsertRowid,
    toJSON: () => ({ columns, columnTypes, rows: r.rows, rowsAffected: r.affectedRowCount }),
  } as ResultSet;
}

type Conn = { client: WsClient; reads: WsStream[]; writes: WsStream; version: Promise<number>; pending: number[] };

/** Streams on one WebSocket to `target`, opened at the first call and again after a failure. */
export function serverStreams(target: { url: string; authToken?: string }): ServerStreams {
  let conn: Conn | undefined;
  let closed = false;

  function open(): Conn {
    if (conn && !conn.client.closed) return conn;
    if (closed) throw new Error("the database client is closed");
    const client = openWs(target.url, target.authToken);
    const stream = () => {
      const s = client.openStream();
      s.intMode = "number";
      return s;
    };
    const reads = Array.from({ length: READ_STREAMS }, stream);
    conn = { client, reads, writes: stream(), version: client.getVersion(), pending: reads.map(() => 0) };
    return conn;
  }

  /** Drops `c` when its WebSocket or one of its streams is gone (the server ended it): the next call opens anew. */
  function check(c: Conn) {
    if (conn !== c) return;
    if (c.client.closed || c.writes.closed || c.reads.some((s) => s.closed)) {
      conn = undefined;
      c.client.close();
    }
  }

  async function reads(stmts: InStatement[]) {
    const c = open();
    // the stream with the fewest reads on their way
    const i = c.pending.indexOf(Math.min(...c.pending));
    c.pending[i]! += stmts.length;
    try {
      const batch = c.reads[i]!.batch((await c.version) >= 3);
      // no conditions: each statement runs whatever became of the others, as a read of its own would; each result
      // handled as it is made (a batch that fails rejects every step's)
      const results = stmts.map((s) =>
        batch
          .step()
          .query(hranaStmt(s))
          .then(
            (r) => (r ? resultSet(r) : undefined),
            () => undefined,
          ),
      );
      await batch.execute();
      return await Promise.all(results);
    } finally {
      c.pending[i]! -= stmts.length;
      check(c);
    }
  }

  async function write(stmts: InStatement[]) {
    const c = open();
    try {
      const batch = c.writes.batch((await c.version) >= 3);
      const begin = batch.step();
      void begin.run("BEGIN IMMEDIATE").catch(() => undefined);
      let last = begin;
      const results = stmts.map((s) => {
        const step = batch.step().condition(BatchCond.ok(last));
        last = step;
        return step.run(hranaStmt(s)).catch((e: unknown) => ({ failed: e }));
      });
      const commit = batch.step().condition(BatchCond.ok(last));
      const committed = commit.run("COMMIT").catch((e: unknown) => ({ failed: e }));
      void batch
        .step()
        .condition(BatchCond.not(BatchCond.ok(commit)))
        .run("ROLLBACK")
        .catch(() => undefined);
      await batch.execute();
      const done = await committed;
      const rows: number[] = [];
      for (const r of await Promise.all(results)) {
        if (!r || "failed" in r) throw r ? r.failed : new Error("a statement of the batch did not run");
        rows.push(r.affectedRowCount);
      }
      if (!done || "failed" in done) throw done ? done.failed : new Error("the batch did not commit");
      return rows;
    } finally {
      check(c);
    }
  }

  return {
    reads,
    write,
    close() {
      closed = true;
      conn?.client.close();
      conn = undefined;
    },
  };
}
