// Statements on the agents' hot paths with their SQL built once. Drizzle builds a query's SQL anew at every call: for
// the select or the update of one node row about as long as SQLite takes to run it, and at fleet size every heartbeat,
// poll and report runs a few. A prepared query (with `sql.placeholder`s for what varies) is built once per database
// and, at each call, run on the database or on the open transaction the call is given.
import type { Q } from "./client.js";

/** What drizzle's libsql session holds: the client, and the open transaction its statements run on, if any. */
type Session = { client: object; tx?: unknown };
const sessionOf = (q: Q) => (q as unknown as { session: Session }).session;

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
