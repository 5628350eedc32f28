// Many rows of one table in one statement whatever their number: the rows go as one JSON array that SQLite unpacks
// (`INSERT … SELECT … FROM json_each(?)`), so the statement's text depends only on the table and its columns. Drizzle
// builds a multi-row INSERT value by value at every call — for 500 rows of three columns ~5 ms, three times what SQLite
// takes to insert them — and a statement of its own per row count would be built and prepared anew for almost every
// placement run (each places a different number of replicas); each statement is also a round trip to a remote
// database (one subrequest of a Worker's budget).
import { getTableColumns, getTableName, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Q } from "./client.js";

/** Rows per INSERT at most: it bounds the size of one statement's argument, not the number of statements built. */
export const ROWS_PER_INSERT = 5000;

/** The text of each (table, columns) INSERT before its argument, built once. */
const heads = new Map<string, string>();
/** Distinct statements kept (table × keys). */
const KEPT = 64;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

function headFor(table: SQLiteTable, keys: string[]): string {
  const id = `${getTableName(table)}|${keys.join(",")}`;
  let h = heads.get(id);
  if (!h) {
    if (heads.size >= KEPT) heads.clear();
    const columns = getTableColumns(table) as Record<string, { name: string }>;
    const names = keys.map((k) => {
      const c = columns[k];
      if (!c) throw new Error(`insertRows: ${getTableName(table)} has no column ${k}`);
      return quote(c.name);
    });
    const values = keys.map((_, i) => `value ->> ${i}`);
    h = `insert into ${quote(getTableName(table))} (${names.join(", ")}) select ${values.join(", ")} from json_each(`;
    heads.set(id, h);
  }
  return h;
}

/**
 * Inserts `rows` into `table`, up to ROWS_PER_INSERT to a statement. Every row has the same keys, and no column among
 * them maps its values (JSON or boolean modes): the values — strings, numbers, null — are stored as they are. Columns
 * left out take their SQL defaults (a JavaScript default function would not run).
 */
export async function insertRows<T extends SQLiteTable>(q: Q, table: T, rows: T["$inferInsert"][]): Promise<void> {
  if (!rows.length) return;
  const keys = Object.keys(rows[0]!);
  const head = headFor(table, keys);
  for (let first = 0; first < rows.length; first += ROWS_PER_INSERT) {
    const part = rows.slice(first, first + ROWS_PER_INSERT) as Record<string, unknown>[];
    const json = JSON.stringify(part.map((row) => keys.map((k) => row[k] ?? null)));
    await q.run(sql.join([sql.raw(head), sql`${json}`, sql.raw(")")]));
  }
}
