// The embedded database's connections: one native prepare per statement text and connection, results unchanged
// through @libsql/client, bounded, emptied by a schema change; and each connection's durability.
import { createClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, describe, expect, it } from "vitest";
import { cacheStatements, STATEMENTS_PER_CONNECTION } from "../../api/db/local-connections.js";
import { openDb } from "../../api/db/open.js";
import { tempDbUrl } from "../helpers/db.js";

const tmp = tempDbUrl();
afterAll(tmp.cleanup);
const path = tmp.url.slice("file:".length);

/** libsql's Database, counting the statements SQLite is asked to prepare. */
class Counting extends Database {
  static all: string[] = [];
  /** The statements prepared, but a connection's setting of its durability. */
  static get prepared() {
    return Counting.all.filter((s) => !s.startsWith("PRAGMA synchronous"));
  }
}
const countingPrepare = Database.prototype.prepare;
Object.defineProperty(Counting.prototype, "prepare", {
  value(this: InstanceType<typeof Database>, sql: string) {
    Counting.all.push(sql);
    return countingPrepare.call(this, sql);
  },
  writable: true,
});
cacheStatements(Counting.prototype as never);
cacheStatements(Counting.prototype as never); // a second install changes nothing

type Stmt = { run(...a: unknown[]): unknown; all(...a: unknown[]): unknown[]; raw(on?: boolean): unknown };
const open = () =>
  new Counting(path) as unknown as { prepare(sql: string): Stmt; exec(sql: string): void; close(): void };

describe("the embedded database's connections", () => {
  it("prepares a statement once per connection, and it runs again with other values, after an error too", () => {
    const db = open();
    db.exec("CREATE TABLE t (id TEXT PRIMARY KEY, v INTEGER)");
    Counting.all.length = 0;
    const insert = "INSERT INTO t VALUES (?, ?)";
    db.prepare(insert).run(["a", 1]);
    expect(() => db.prepare(insert).run(["a", 2])).toThrow(/PRIMARY KEY|UNIQUE/);
    db.prepare(insert).run(["b", 2]);
    const select = db.prepare("SELECT id, v FROM t ORDER BY id");
    select.raw(true);
    expect(select.all()).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
    expect(Counting.prepared).toEqual([insert, "SELECT id, v FROM t ORDER BY id"]);
    // another connection has statements of its own
    const other = open();
    other.prepare(insert).run(["c", 3]);
    expect(Counting.prepared.filter((s) => s === insert)).toHaveLength(2);
    db.close();
    other.close();
  });

  it("keeps the most recently used statements, at most STATEMENTS_PER_CONNECTION", () => {
    const db = open();
    Counting.all.length = 0;
    for (let i = 0; i <= STATEMENTS_PER_CONNECTION; i++) db.prepare(`SELECT ${i}`);
    db.prepare(`SELECT ${STATEMENTS_PER_CONNECTION}`); // the newest is still there
    db.prepare("SELECT 0"); // the oldest went
    expect(Counting.prepared).toHaveLength(STATEMENTS_PER_CONNECTION + 2);
    expect(Counting.prepared.at(-1)).toBe("SELECT 0");
    db.close();
  });

  it("through @libsql/client: rows by column name, rows affected, and a column a schema change added", async () => {
    cacheStatements();
    const client = createClient({ url: tmp.url });
    await client.execute("CREATE TABLE u (id TEXT PRIMARY KEY, v INTEGER)");
    await client.execute({ sql: "INSERT INTO u VALUES (?, ?)", args: ["x", 1] });
    const update = await client.execute({ sql: "UPDATE u SET v = v + 1 WHERE id = ?", args: ["x"] });
    expect(update.rowsAffected).toBe(1);
    const before = await client.execute("SELECT * FROM u");
    expect(before.columns).toEqual(["id", "v"]);
    await client.execute("ALTER TABLE u ADD COLUMN w INTEGER DEFAULT 7");
    const after = await client.execute("SELECT * FROM u");
    expect(after.columns).toEqual(["id", "v", "w"]);
    expect({ ...after.rows[0] }).toEqual({ id: "x", v: 2, w: 7 });
    const tx = await client.transaction("write");
    await tx.execute({ sql: "UPDATE u SET v = 10 WHERE id = ?", args: ["x"] });
    await tx.rollback();
    expect((await client.execute("SELECT v FROM u")).rows[0]?.v).toBe(2);
    client.close();
  });

  it("commits with the durability serve was given: NORMAL by default, FULL with LLMGW_DB_SYNC=full", async () => {
    for (const [sync, level] of [
      [undefined, 1],
      ["full", 2],
      ["normal", 1],
    ] as const) {
      const { client } = await openDb(tmp.url, undefined, sync);
      // every connection of the pool: the transaction takes one, the read beside it another
      const tx = await client.transaction("read");
      const both = await Promise.all([tx.execute("PRAGMA synchronous"), client.execute("PRAGMA synchronous")]);
      expect(both.map((r) => r.rows[0]?.synchronous)).toEqual([level, level]);
      tx.close();
      client.close();
    }
  });
});
