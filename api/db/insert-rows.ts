// Many rows of one table in few statements, each statement's SQL built once: drizzle builds a multi-row INSERT value by
// value at every call — for 500 rows of three columns ~5 ms, three times what SQLite takes to insert them — and
// placement inserts thousands of rows (replicas, shards, devices, ports) when a large deployment is placed.
import { getTableName, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Q } from "./client.js";
import { prepared } from "./prepared.js";

/** Rows per INSERT: at a few parameters a row, far below SQLite's limit on bound parameters. */
export const ROWS_PER_INSERT = 500;

type Insert = ReturnType<typeof prepared<Record<string, unknown>, unknown>>;
const statements = new Map<string, Insert>();
/** Distinct statements kept (table × keys × row count): a run's last part has a count of its own. */
const KEPT = 64;

const nameOf = (key: string, row: number) => `${key}_${row}`;

function statementFor(table: SQLiteTable, keys: string[], rows: number): Insert {
  const id = `${getTableName(table)}|${keys.join(",")}|${rows}`;
  let s = statements.get(id);
  if (!s) {
    if (statements.size >= KEPT) statements.clear();
    const values = Array.from({ length: rows }, (_, i) =>
      Object.fromEntries(keys.map((k) => [k, sql.placeholder(nameOf(k, i))])),
    );
    s = prepared((q) =>
      q
        .insert(table)
        .values(values as never)
        .prepare(),
    );
    statements.set(id, s);
  }
  return s;
}

/**
 * Inserts `rows` into `table`, ROWS_PER_INSERT to a statement. Every row has the same keys, and no column among them
 * maps its values (JSON or boolean modes): the values go to the driver as they are. Columns left out take their SQL
 * defaults (a JavaScript default function would run once, when the statement is built).
 */
export async function insertRows<T extends SQLiteTable>(q: Q, table: T, rows: T["$inferInsert"][]): Promise<void> {
  if (!rows.length) return;
  const keys = Object.keys(rows[0]!);
  for (let first = 0; first < rows.length; first += ROWS_PER_INSERT) {
    const part = rows.slice(first, first + ROWS_PER_INSERT) as Record<string, unknown>[];
    const values: Record<string, unknown> = {};
    part.forEach((row, i) => {
      for (const k of keys) values[nameOf(k, i)] = row[k] ?? null;
    });
    await statementFor(table, keys, part.length)(q, values);
  }
}
