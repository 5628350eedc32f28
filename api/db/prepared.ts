// Statements on the agents' hot paths with their SQL built once. Drizzle builds a query's SQL anew at every call: for
// the select or the update of one node row about as long as SQLite takes to run it, and at fleet size every heartbeat,
// poll and report runs a few. A prepared query (with `sql.placeholder`s for what varies) is built once per database
// and, at each call, run on the database or on the open transaction the call is given.
import type { InStatement, InValue } from "@libsql/client";
import { Placeholder, sql } from "drizzle-orm";
import { type Q, sessionOf } from "./client.js";

type Runnable<V, R> = { execute(values: V): Promise<R> };

/**
 * `build(q).prepare()`'s query, built the first time per database and run with `values` on `q` — the database, or a
 * transaction of it (the driver's prepared query runs on the transaction it holds in `tx`, or on the client).
 */
export function prepared<V extends Record<string, unknown>, R>(build: (q: Q) => Runnable<V, R>) {
  const byClient = new WeakMap<object, Runnable<V, R>>();
  return (q: Q, values: V): Promise<R> => {
    const s = sessionOf(q);
    let query = byClient.get(s.client);
    if (!query) byClient.set(s.client, (query = build(q)));
    const run = Object.create(query) as Runnable<V, R> & { tx?: unknown };
    run.tx = s.tx;
    return run.execute(values);
  };
}

/** A value bound at each run in an UPDATE's SET or an INSERT's VALUES (drizzle types a bare placeholder only in a WHERE). */
export const param = (name: string) => sql`${sql.placeholder(name)}`;

/** A query drizzle can render: its SQL and parameters, `Placeholder`s where a value is bound at each call. */
type Renderable = { toSQL(): { sql: string; params: unknown[] } };

/**
 * A statement whose SQL `build(q)` renders once (drizzle's query with `sql.placeholder`s), as a plain statement with
 * `values` bound: what a batch sends (Store.writeStatements) and `runStatement` runs on an open transaction.
 */
export function statement<V extends Record<string, InValue>>(build: (q: Q) => Renderable) {
  let built: { sql: string; params: unknown[] } | undefined;
  return (q: Q, values: V): InStatement => {
    built ??= build(q).toSQL();
    return {
      sql: built.sql,
      args: built.params.map((p) => (p instanceof Placeholder ? values[p.name] : p) as InValue),
    };
  };
}
