// A transaction whose selects say what they read: for tests of what placement reads under the write lock.
import { getTableName } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Tx } from "../../api/db/client.js";

/** `tx`, telling `note` the table each of its selects reads from and the columns it names (none: every column). */
export function watchReads(tx: Tx, note: (table: string, columns: string[]) => void): Tx {
  return new Proxy(tx, {
    get(target, p) {
      if (p !== "select") return Reflect.get(target, p, target);
      return (fields?: Record<string, unknown>) => {
        const q = fields ? target.select(fields as never) : target.select();
        return new Proxy(q, {
          get(b, k) {
            if (k !== "from") return Reflect.get(b, k, b);
            return (table: SQLiteTable) => {
              note(getTableName(table), Object.keys(fields ?? {}));
              return b.from(table as never);
            };
          },
        });
      };
    },
  });
}
