import { sql } from "drizzle-orm";
import type { Db } from "./client.js";
import type { MigrationInfo } from "./journal.js";

export type MigrationStatus = { current: boolean; pending: string[] };

/** Which of the migrations this build needs the database has not applied (drizzle records each one's timestamp). */
export async function migrationStatus(db: Db, info: MigrationInfo): Promise<MigrationStatus> {
  let last = -1;
  try {
    const rows = await db.all<{ created_at: number | string }>(
      sql`SELECT created_at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1`,
    );
    if (rows[0]) last = Number(rows[0].created_at);
  } catch (e) {
    const cause = e instanceof Error ? `${e.message} ${String(e.cause ?? "")}` : String(e);
    if (!/no such table/i.test(cause)) throw e;
  }
  const pending = info.expected.filter((m) => m.when > last).map((m) => m.tag);
  return { current: pending.length === 0, pending };
}
