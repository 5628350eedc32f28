// Placement's reads made ahead of any change, on Node: the whole fleet at start-up, then what changed every few
// seconds. At fleet size a read of every node's inventory costs about a second (10,000 nodes), and a fleet that
// reconnects after a restart rewrites every node's facts; read by the first placement run after them, that second
// would fall on the change waiting for it.
import { setTimeout as sleep } from "node:timers/promises";
import type { Db } from "../db/client.js";
import type { Log } from "../log.js";
import { type PlacementCache, warmPlacementCache } from "./rows.js";

/** How often the cache is brought up to date between placement runs (a few small reads when nothing changed). */
export const READ_AHEAD_MS = 5_000;

/**
 * Reads the fleet into `cache` now (logged with its count and time), then what changed every `everyMs` until `stop`
 * aborts. A failure is logged once and left to the next read (or to the next placement run, which reads for itself).
 */
export async function readFleetAhead(
  db: Db,
  cache: PlacementCache,
  log: Log,
  stop: AbortSignal,
  everyMs = READ_AHEAD_MS,
): Promise<void> {
  const began = performance.now();
  try {
    await warmPlacementCache(db, cache);
    const ms = Math.round(performance.now() - began);
    log.info(`read ${cache.nodes.size} nodes for placement in ${ms} ms`, { nodes: cache.nodes.size, ms });
  } catch (e) {
    if (!stop.aborted)
      log.warn("placement's first read of the fleet failed; the first placement run reads it", { error: String(e) });
  }
  let failing = false;
  while (!stop.aborted) {
    const slept = await sleep(everyMs, true, { signal: stop }).catch(() => false);
    if (!slept) return;
    await warmPlacementCache(db, cache).then(
      () => {
        failing = false;
      },
      (e: unknown) => {
        if (!failing)
          log.warn("placement's read ahead failed; placement runs read for themselves", { error: String(e) });
        failing = true;
      },
    );
  }
}
