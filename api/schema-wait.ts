// Start-up's wait for the database: until it answers and holds every migration this build needs, saying why not.
import type { Db } from "./db/client.js";
import { dbFailure, describeDbError } from "./db/db-errors.js";
import { expectedMigrations } from "./db/journal.js";
import { migrationStatus } from "./db/migration-status.js";
import type { Log } from "./log.js";

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const t = setTimeout(finish, ms);
    signal.addEventListener("abort", finish, { once: true });
    function finish() {
      clearTimeout(t);
      signal.removeEventListener("abort", finish);
      done();
    }
  });
}

/**
 * Resolves once the database answers and has every migration this build needs; while it does not, logs why — the
 * database unreachable (with the cause) or the schema behind — once each time the reason changes.
 */
export async function waitForSchema(
  db: Db,
  log: Log,
  signal: AbortSignal,
  waiting: () => void,
  everyMs = 2000,
): Promise<void> {
  let told: string | undefined;
  while (!signal.aborted) {
    const m = await migrationStatus(db, expectedMigrations).catch((e: unknown) => ({
      error: dbFailure(e)
        ? `database unreachable: ${describeDbError(e)}`
        : `cannot read the schema: ${describeDbError(e)}`,
    }));
    if ("current" in m && m.current) {
      if (told) log.info("database schema is current; serving");
      return;
    }
    const why =
      "error" in m
        ? `${m.error}; retrying every ${everyMs / 1000} s — /readyz fails until then`
        : `database schema is behind this build (pending: ${m.pending.join(", ")}); run \`llmgw migrate\` — /readyz fails until then`;
    if (why !== told) log.error(why);
    told = why;
    waiting();
    await sleep(everyMs, signal);
  }
  throw new Error("stopped before the database schema was current");
}
