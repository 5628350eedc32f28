// Copying a file database's write-ahead log into the database file from the fleet thread, so that the serving thread
// seldom does. SQLite copies the log when a commit leaves it past 1,000 pages (its auto-checkpoint), in the connection
// that committed — at fleet size the serving thread, whose agents' writes fill the log every few seconds: each copy
// (~1,000 pages and two syncs, 10–60 ms on a 2-core VM) stopped its event loop with every request behind it. A passive
// copy on another connection every quarter second keeps the log copied as it grows: the auto-checkpoint, still on,
// then finds little or nothing left to copy (and it stays the safety net while the fleet thread is down, and in the
// single binary, which has no fleet thread). A passive copy waits for no reader or writer.
import type { Client } from "@libsql/client";
import type { Log } from "../log.js";

/** How often the fleet thread copies the log. */
export const CHECKPOINT_EVERY_MS = 250;

/**
 * Copies the log of `client`'s database file (a local one: its statements run synchronously, so no copy overlaps the
 * next) every `everyMs` until `stop` aborts; failures are logged once until a copy succeeds again.
 */
export function keepCheckpointing(
  client: Pick<Client, "execute">,
  o: { log: Log; stop: AbortSignal; everyMs?: number },
): void {
  let warned = false;
  const timer = setInterval(async () => {
    try {
      await client.execute("PRAGMA wal_checkpoint(PASSIVE)");
      warned = false;
    } catch (e) {
      if (!warned) o.log.warn("copying the database's write-ahead log failed", { error: (e as Error).message });
      warned = true;
    }
  }, o.everyMs ?? CHECKPOINT_EVERY_MS);
  timer.unref();
  o.stop.addEventListener("abort", () => clearInterval(timer), { once: true });
}
