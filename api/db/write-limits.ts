// How many writes an instance groups into one transaction or batch, how many it holds waiting, and how long a write
// that failed for the storage's sake keeps it unready (client.ts's Store).
import { QUEUE_FULL } from "./db-errors.js";

/** How long a write that failed for lack of space (or a read-only file) keeps the instance unready. */
export const WRITE_FAILURE_MS = 60_000;

/** Writes that queue up behind a running one share the next transaction, at most this many. */
export const MAX_GROUP = 64;

/**
 * Statement writes that queue up behind a batch on its way share the next, at most this many calls. More than a
 * transaction's group: a batch runs its statements inside the server, with no round trip between them, so one that
 * waits for the write lock should take every call that came meanwhile.
 */
export const MAX_BATCH = 256;

/**
 * Writes (and statement writes) an instance holds waiting for their turn at most; past that a write fails at once as
 * the database being busy (503, the agents back off) instead of waiting behind minutes of others while its caller
 * gives up and sends it again — a fleet whose calls outpace the database would otherwise pile them up in memory.
 */
export const MAX_WAITING = 1024;

/** The error for a write refused because `n` wait already. */
export const queueFull = (n: number) =>
  Object.assign(new Error(`this instance already holds ${n} writes waiting for the database`), { code: QUEUE_FULL });
