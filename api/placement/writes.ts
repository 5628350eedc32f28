// The writes a placement decision makes, kept to run later in the transaction that carries the decision out
// (decide.ts): its reads and plan() can then run before that transaction, where no other write waits for them.
import type { Tx } from "../db/client.js";
import { insertEvents, type NewEvent } from "../db/events.js";

/** A write a decision makes, run in the transaction that carries it out. */
export type Write = (tx: Tx) => Promise<unknown>;

/** Stores `list` stamped `at`, in the transaction: the process log gets them when it commits. */
export const storeEvents =
  (at: number, list: NewEvent[]): Write =>
  (tx) =>
    insertEvents(tx, at, list);
