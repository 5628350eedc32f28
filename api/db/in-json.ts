// `column IN (…)` for any number of values, as one argument: the values go as a JSON array that SQLite unpacks
// (`json_each`), so the statement's text is the same whatever their number, nothing is built per value (drizzle's
// inArray binds each one, and SQLite refuses a statement past 32,766 of them), and the column's index is still used.
import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/** `column IN (values)`, the values bound as one JSON array. */
export const inJson = (column: SQLiteColumn, values: readonly (string | number)[]): SQL =>
  sql`${column} in (select value from json_each(${JSON.stringify(values)}))`;
