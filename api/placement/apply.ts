// The one place placement writes to the database: decide (decide.ts) and write the decision in one write
// transaction, only when the cluster generation moved since the last placement. The decision is made in that
// transaction, or, where other writes of the instance would wait for it there, before it: the transaction then writes
// it only if the cluster is still as it was decided on, and decides again otherwise.
import { eq } from "drizzle-orm";
import type { Store, Tx } from "../db/client.js";
import { prepared } from "../db/prepared.js";
import { cluster } from "../db/schema.js";
import { type Basis, type Decided, type Decisions, decide } from "./decide.js";
import { waitForCluster } from "./pace.js";
import type { PlaceSettings } from "./repair-adopt.js";
import { behind, keepPlaced, newPlacementCache, type PlacementCache, warmPlacementCache } from "./rows.js";

export type { Decisions } from "./decide.js";
export type { PlaceSettings } from "./repair-adopt.js";
export type PlaceResult = {
  ran: boolean;
  /**
   * The run found the change it set out to place placed already, by another instance (its transaction waited for the
   * write lock while that one held it): that instance's commit may have moved this instance's nodes too.
   */
  elsewhere?: true;
  /**
   * Nothing ran: on a libSQL server the cluster's last run (by any instance) was too recent — ask again after this
   * many ms (PlaceHow.pace).
   */
  waitMs?: number;
  changedNodes: string[];
  assigned: number;
  released: number;
  decisions?: Decisions;
};
const NOTHING: PlaceResult = { ran: false, changedNodes: [], assigned: 0, released: 0 };

/** Whether the cluster row `c` is still the one `d` was decided on: nothing that can alter placement was written since. */
const unchangedSince = (d: Decided, c: Basis) =>
  c.generation === d.basis.generation &&
  c.placedGeneration === d.basis.placedGeneration &&
  c.nextSeq === d.basis.nextSeq &&
  c.assignSeq === d.basis.assignSeq;

/**
 * Places in `tx`: writes `ahead` (decided before the transaction) when the cluster is as it was decided on, else
 * decides again here, on what the transaction reads.
 */
async function placeIn(
  tx: Tx,
  now: number,
  settings: PlaceSettings,
  cache: PlacementCache,
  began: number,
  ahead?: Decided,
): Promise<PlaceResult & { kept?: Decided["kept"] }> {
  const [c] = await tx.select().from(cluster).where(eq(cluster.id, 1));
  if (!c || c.generation === c.placedGeneration) return NOTHING;
  const {
    basis: _basis,
    writes,
    cluster: counters,
    ...d
  } = ahead && unchangedSince(ahead, c) ? ahead : await decide(tx, c, now, settings, cache);
  for (const w of writes) await w(tx);
  // the run's start and length, up to here, for every instance's pace (waitForCluster)
  const placeMs = Math.ceil(performance.now() - began);
  await tx
    .update(cluster)
    .set({ ...counters, placedAt: now, placeMs })
    .where(eq(cluster.id, 1));
  return { ran: true, ...d };
}

/** Decides on what `db` reads now, outside any transaction (undefined when nothing needs placing). */
async function decideAhead(
  db: Store["db"],
  now: number,
  settings: PlaceSettings,
  cache: PlacementCache,
): Promise<Decided | undefined> {
  const [c] = await db.select().from(cluster).where(eq(cluster.id, 1));
  return c && c.generation !== c.placedGeneration ? decide(db, c, now, settings, cache) : undefined;
}

const isConflict = (e: unknown) =>
  /UNIQUE constraint failed|SQLITE_CONSTRAINT|SQLITE_BUSY|database is locked/i.test(
    `${String(e)} ${String((e as { cause?: unknown })?.cause ?? "")}`,
  );

// every poll and every write asks it: its SQL built once
const generations = prepared((q) =>
  q
    .select({
      g: cluster.generation,
      p: cluster.placedGeneration,
      seq: cluster.assignSeq,
      placedAt: cluster.placedAt,
      placeMs: cluster.placeMs,
    })
    .from(cluster)
    .where(eq(cluster.id, 1))
    .prepare(),
);

/** How placeIfNeeded() reads and decides. */
export type PlaceHow = {
  /**
   * What changed since the last run is read before the write transaction rather than under it, where the writes wait;
   * the transaction then reads only what changed in between (on the file's serving thread, reading twice costs the
   * event loop more). Default: on a server, where every instance's writes wait for the lock.
   */
  readFirst?: boolean;
  /**
   * The whole decision — reads, repairs, plan(), the rows to write — is made before the write transaction, which
   * writes it if the cluster row is as it was (and decides again if not). For a connection of its own whose instance
   * has no other instance placing beside it (the fleet thread on the file): its serving thread's writes then wait
   * only for placement's writes, not its plan.
   */
  decideFirst?: boolean;
  /**
   * On a libSQL server, a run waits for the cluster's last run, whichever instance made it, as placeTimed waits for
   * its own: as long idle after it as it took, beyond this allowance (ms) — the result's `waitMs` says how long is
   * left, and nothing ran. Absent: no wait (a file database has one instance).
   */
  pace?: number;
};

/**
 * Places what the declarations ask for, when anything changed since the last placement. An unchanged cluster costs
 * one plain read; a transaction that conflicts with another instance's is retried.
 */
export async function placeIfNeeded(
  store: Store,
  now: number,
  settings: PlaceSettings,
  cache: PlacementCache = newPlacementCache(),
  how: PlaceHow = {},
): Promise<PlaceResult> {
  const [c] = await generations(store.db, {});
  if (!c || c.g === c.p) return NOTHING;
  if (how.pace !== undefined && store.server) {
    const waitMs = waitForCluster(c, now, how.pace);
    if (waitMs > 0) return { ...NOTHING, waitMs };
  }
  const began = performance.now();
  // (a decision made first reads for itself, outside the transaction)
  const readFirst = !how.decideFirst && (how.readFirst ?? store.server === true);
  if (readFirst && behind(cache, c.g, c.seq)) await warmPlacementCache(store.db, cache);
  for (let attempt = 1; ; attempt++) {
    try {
      // a retry decides in its transaction: what conflicted was written after the decision
      const ahead = how.decideFirst && attempt === 1 ? await decideAhead(store.db, now, settings, cache) : undefined;
      const { kept, ...placed } = await store.write((tx) => placeIn(tx, now, settings, cache, began, ahead));
      // committed: the replicas it left are what the next read would fetch
      if (kept) keepPlaced(cache, kept.readAt, kept.assignSeq, kept.replicas);
      return placed.ran ? placed : { ...placed, elsewhere: true };
    } catch (e) {
      if (attempt >= 5 || !isConflict(e)) throw e;
    }
  }
}
