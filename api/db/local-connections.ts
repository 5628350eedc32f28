// What each connection to the embedded database does besides running statements: it prepares each statement once, and
// commits with the durability `serve` was given.
//
// Statements: @libsql/client's local driver prepares every statement it runs anew, then asks it twice for its columns
// and sets its modes: ~60–120 µs a statement on a 2-core machine, more than running most of them, and an agent's
// heartbeat runs about ten. Here each connection keeps its recent statements by their text (SQLite statements are
// reusable: each run resets and rebinds them), with the answers that cannot change while the schema stands: the
// columns, whether it returns rows, its modes.
import Database from "libsql";

/** The parts of a libsql statement the client's driver uses. */
type Statement = {
  readonly reader: boolean;
  raw(on?: boolean): unknown;
  safeIntegers(on?: boolean): unknown;
  columns(): unknown;
  run(...args: unknown[]): unknown;
  get(...args: unknown[]): unknown;
  all(...args: unknown[]): unknown[];
  iterate(...args: unknown[]): unknown;
  interrupt(): void;
};
type Connection = { prepare(sql: string): Statement; exec(sql: string): unknown };

/** How many statements each connection keeps (the least recently used go first). */
export const STATEMENTS_PER_CONNECTION = 256;

/**
 * How commits reach the disk (SQLite's `synchronous`, in WAL mode). `normal`: the log is synced at checkpoints, not at
 * every commit — a crash of the process loses nothing, a power loss or kernel crash can lose the last commits (the
 * database stays consistent); `full`: every commit is synced before it returns (~0.7 ms on this machine's disk, on
 * the event loop: the driver is synchronous).
 */
export type DbSync = "normal" | "full";
let synchronous: DbSync = "normal";

/** Sets the durability of connections opened from now on (the ones open keep theirs). */
export function setDbSync(mode: DbSync): void {
  synchronous = mode;
}

// a schema change can change what `SELECT *` returns: every connection's statements are dropped when one is seen
const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

const NOT_A_READER = new TypeError("the statement returns no data");

/** A statement whose modes and columns are asked of SQLite once. */
function remembering(s: Statement): Statement {
  const reader = s.reader;
  let raw: boolean | undefined;
  let safe: boolean | undefined;
  let columns: unknown;
  const self: Statement = {
    reader,
    raw(on = true) {
      // the driver tells a statement that returns rows by whether raw() throws
      if (!reader) throw NOT_A_READER;
      if (raw !== on) s.raw(on);
      raw = on;
      return self;
    },
    safeIntegers(on = true) {
      if (safe !== on) s.safeIntegers(on);
      safe = on;
      return self;
    },
    columns: () => (columns ??= s.columns()),
    run: (...a) => s.run(...a),
    get: (...a) => s.get(...a),
    all: (...a) => s.all(...a),
    iterate: (...a) => s.iterate(...a),
    interrupt: () => s.interrupt(),
  };
  return self;
}

// on the prototype itself, so that a second copy of this module (a test runner's) does not wrap it again
const INSTALLED = Symbol.for("llmgw.statementCache");

/**
 * Makes `prepare` on every connection of `proto` (libsql's Database by default) answer from that connection's cache,
 * and sets each connection's durability at its first statement. Idempotent. Call before opening a file database;
 * remote databases do not use it.
 */
export function cacheStatements(proto: Connection = Database.prototype as unknown as Connection): void {
  if (Object.hasOwn(proto, INSTALLED)) return;
  Object.defineProperty(proto, INSTALLED, { value: true });
  const { prepare, exec } = proto;
  let schemaEpoch = 0;
  const configured = new WeakSet<object>();
  const caches = new WeakMap<object, { epoch: number; byText: Map<string, Statement> }>();
  /** This connection's statements, emptied when the schema changed since. */
  const cacheOf = (db: object) => {
    let c = caches.get(db);
    if (!c || c.epoch !== schemaEpoch) caches.set(db, (c = { epoch: schemaEpoch, byText: new Map() }));
    return c.byText;
  };
  proto.prepare = function (this: Connection, sql: string) {
    // a connection's first statement (the driver's probe, at its opening) comes after its durability is set
    if (!configured.has(this)) {
      configured.add(this);
      prepare.call(this, `PRAGMA synchronous = ${synchronous.toUpperCase()}`).run();
    }
    const byText = cacheOf(this);
    let s = byText.get(sql);
    if (s) byText.delete(sql);
    else {
      // a schema change is never kept, so only a statement not found can be one
      if (SCHEMA_CHANGE.test(sql)) {
        schemaEpoch++;
        return prepare.call(this, sql);
      }
      s = remembering(prepare.call(this, sql));
      if (byText.size >= STATEMENTS_PER_CONNECTION) byText.delete(byText.keys().next().value as string);
    }
    byText.set(sql, s);
    return s;
  };
  // exec runs scripts (migrations among them) the cache never sees
  proto.exec = function (this: Connection, sql: string) {
    schemaEpoch++;
    return exec.call(this, sql);
  };
}
