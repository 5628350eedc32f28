// Placement as the request paths, the console and the liveness sweep run it: timed for
// llmgw_placement_duration_seconds, and waking the long-polls of the nodes whose shards changed.
import type { Store } from "../db/client.js";
import type { Log } from "../log.js";
import { type PlaceResult, type PlaceSettings, placeIfNeeded } from "./apply.js";
import { type Owed, owedAfter, waitBefore } from "./pace.js";
import type { PlacementCache } from "./rows.js";

type PlaceDeps = {
  store: Store;
  settings: PlaceSettings;
  placementCache?: PlacementCache;
  /** Told how long each placement run that changed the cluster's generation took. */
  observePlacement?: (seconds: number) => void;
  /** Told each placement decision (placed, released, a reason that changed). */
  log?: Log;
  /**
   * Runs placeIfNeeded() elsewhere (Node: on the fleet thread), `pace` as PlaceHow's; absent or answering undefined:
   * here.
   */
  place?: (now: number, pace?: number) => Promise<PlaceResult> | undefined;
};

type WakeDeps = PlaceDeps & { waiter: { notify(): void }; log: Log; now: () => number };

/**
 * How much placement may run ahead of half of the instance's time for an operator's write (not an agent's report):
 * a few writes in a row are each placed at once. Agents' calls get none — at fleet size their storms (a thousand
 * reports after a change: failures, ready replicas of a rolling replacement) must share runs, or every report that
 * moves the generation would start one.
 */
export const WRITE_ALLOWANCE_MS = 500;

/** Per store (one API instance): the placement run going on, the one queued to start after it, and what is owed. */
type Flight = { current?: Promise<PlaceResult>; queued?: Promise<PlaceResult>; owed: Owed };
const flights = new WeakMap<Store, Flight>();

/**
 * placeIfNeeded(), one run at a time per instance, and at most half of the instance's time (beyond `allowanceMs`):
 * who asks while a run goes on, or while placement owes more idle time than that, waits for the one run queued next
 * (which sees whatever changed meanwhile). A burst of polls, registrations and reports then places a few times, not
 * once each — at fleet size every run reads and plans the whole fleet's state.
 */
export function placeTimed(deps: PlaceDeps, now: number, allowanceMs = 0): Promise<PlaceResult> {
  let f = flights.get(deps.store);
  if (!f) flights.set(deps.store, (f = { owed: { ms: 0, at: 0 } }));
  const flight = f;
  if (flight.queued) return flight.queued;
  const start = () => {
    const run = placePaced(deps, now, allowanceMs, flight).finally(() => {
      if (flight.current === run) flight.current = undefined;
    });
    flight.current = run;
    return run;
  };
  if (!flight.current && waitBefore(flight.owed, performance.now(), allowanceMs) === 0) return start();
  const queued = (flight.current ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => new Promise((ok) => setTimeout(ok, waitBefore(flight.owed, performance.now(), allowanceMs))))
    .then(() => {
      flight.queued = undefined;
      return start();
    });
  flight.queued = queued;
  return queued;
}

/**
 * One run: on a libSQL server, when the cluster's last run (any instance's) was too recent, it waits once for as long
 * as that asks (placeIfNeeded's `pace`), then runs. A change found placed after the wait was placed by another
 * instance meanwhile (`elsewhere`: its commit may have moved this instance's nodes).
 */
async function placePaced(deps: PlaceDeps, now: number, allowanceMs: number, flight: Flight): Promise<PlaceResult> {
  const placed = await placeOnce(deps, now, flight, allowanceMs);
  if (!placed.waitMs) return placed;
  const waitMs = placed.waitMs;
  await new Promise((ok) => setTimeout(ok, waitMs));
  const after = await placeOnce(deps, now + waitMs, flight);
  return after.ran ? after : { ...after, elsewhere: true };
}

/**
 * placeIfNeeded(), adding to what the instance owes and telling `observePlacement` how long it took when it ran (an
 * unchanged cluster is not a run).
 */
async function placeOnce(deps: PlaceDeps, now: number, flight: Flight, pace?: number): Promise<PlaceResult> {
  const started = performance.now();
  const how = pace === undefined ? {} : { pace };
  const placed = await (deps.place?.(now, pace) ??
    placeIfNeeded(deps.store, now, deps.settings, deps.placementCache, how));
  if (placed.ran) {
    flight.owed = owedAfter(flight.owed, started, performance.now());
    deps.observePlacement?.((performance.now() - started) / 1000);
  }
  if (deps.log) logDecisions(deps.log, placed);
  return placed;
}

/** One line per decision of a placement run: where each new replica went, each freed one, each reason that changed. */
export function logDecisions(log: Log, r: PlaceResult): void {
  const d = r.decisions;
  if (!d) return;
  for (const x of d.placed)
    log.info(`placed replica ${x.replicaId} of ${x.deployment} on ${x.shards.join(", ")} (${x.fabric})`, {
      replicaId: x.replicaId,
      deployment: x.deployment,
      nodeIds: x.shards.map((s) => s.slice(0, s.indexOf("["))),
      fabric: x.fabric,
    });
  for (const id of d.released) log.info(`released replica ${id}`, { replicaId: id });
  for (const x of d.pending)
    if (x.reason) log.info(`deployment ${x.deployment} pending: ${x.reason}`, { deployment: x.deployment });
    else log.info(`deployment ${x.deployment} has nothing pending`, { deployment: x.deployment });
}

/**
 * Whether a run may have moved nodes' assignments: its own changes, or another instance's placement it found committed
 * (the poll hub looks at once, rather than at its next look).
 */
export const movedAny = (r: PlaceResult) => r.changedNodes.length > 0 || r.elsewhere === true;

/**
 * Places now and wakes the long-polls of nodes whose shards changed (here, or by another instance's run just before);
 * a failure is logged (the next poll retries it).
 */
export function placeAndWake(deps: WakeDeps, after: string, allowanceMs = 0): Promise<void> {
  return placeTimed(deps, deps.now(), allowanceMs)
    .then((r) => (movedAny(r) ? deps.waiter.notify() : undefined))
    .catch((e: unknown) =>
      deps.log.warn(`placement after ${after} failed; the next poll retries it`, { error: String(e) }),
    );
}

/**
 * Places soon after a write that may change placement (an API write, a console action), without holding up its
 * response — every agent may be parked in a long-poll, so waiting for the next poll could wait a long time. The work
 * goes to `deps.background` (Node: tracked for shutdown) or, where there is none, to `waitUntil` (the Worker's).
 * `allowanceMs`: how far it may run ahead of half of the instance's time (placeTimed).
 */
export function placeSoon(
  deps: WakeDeps & { background?: (work: Promise<unknown>) => void },
  waitUntil: (work: Promise<unknown>) => void,
  after: string,
  allowanceMs = 0,
): void {
  const work = placeAndWake(deps, after, allowanceMs);
  if (deps.background) deps.background(work);
  else waitUntil(work);
}
