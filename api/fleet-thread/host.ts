// The serving thread's side of the fleet thread (protocol.ts): starts it, hands it placement runs, the cluster gauges'
// reads and the capacity's, grants it write turns in this instance's queue, and writes its log lines and events.
// Should the thread end on its own, its work comes back to the serving thread: asked then, `place`, `scrape` and
// `capacity` answer undefined, and their callers do the work themselves, as where there is no fleet thread.
import { Worker } from "node:worker_threads";
import type { Capacity } from "../../shared/schemas/plan.js";
import type { Store, WrittenEvent } from "../db/client.js";
import type { Log } from "../log.js";
import type { ClusterScrape } from "../metrics/cluster-figures.js";
import type { PlaceResult } from "../placement/apply.js";
import type { Ask, HostSays, ThreadConfig, ThreadSays } from "./protocol.js";
import { fromThreadError, toThreadError } from "./thread-error.js";

/** The fleet thread's young generation (MiB; V8's own lets it grow to 32 on 64-bit). */
const YOUNG_MB = 8;

/** How long a stopping fleet thread may take to close its database before it is ended. */
const STOP_MS = 5000;

export type FleetThread = {
  /** A placement run on the thread; undefined once the thread has ended (run it here). */
  place(now: number, pace?: number): Promise<PlaceResult> | undefined;
  /** The cluster gauges read on the thread; undefined once the thread has ended (read them here). */
  scrape(now: number): Promise<ClusterScrape> | undefined;
  /** The fleet's capacity read on the thread; undefined once the thread has ended (read it here). */
  capacity(now: number): Promise<Capacity> | undefined;
  close(): Promise<void>;
};

export type FleetThreadOptions = {
  /** This instance's store, whose write turns the thread's transactions take. */
  store: Store;
  log: Log;
  /** Told the events the thread's writes stored. */
  onEvents: (events: WrittenEvent[]) => void;
  /** Told why, should the thread end on its own (not by `close`). */
  onEnd?: (why: string) => void;
};

/** Starts the fleet thread from `file` (the built fleet-thread.js). */
export function startFleetThread(file: string, config: ThreadConfig, o: FleetThreadOptions): FleetThread {
  // its young generation small: the thread's garbage is placement's, whose collections stop no request
  const worker = new Worker(file, { workerData: config, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB } });
  /** What was asked and not answered yet: how to settle it, and its answer (that `close` waits for). */
  const asked = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void; answer?: Promise<unknown> }>();
  const turnsHeld = new Map<number, () => void>();
  let ids = 0;
  let ended = false;
  const send = (m: HostSays) => worker.postMessage(m);

  worker.on("message", (m: ThreadSays) => {
    if (m.kind === "answer") {
      const a = asked.get(m.id);
      asked.delete(m.id);
      if (m.error === undefined) a?.ok(m.value);
      else a?.fail(fromThreadError(m.error));
    } else if (m.kind === "turn") {
      const held = new Promise<void>((over) => turnsHeld.set(m.turn, over));
      const hold = () => {
        send({ kind: "granted", turn: m.turn });
        return held;
      };
      // refused (this instance's writes queue is full): the thread's write fails as one of this thread's would
      void (o.store.turn ? o.store.turn(hold) : hold()).catch((e: unknown) => {
        turnsHeld.delete(m.turn);
        send({ kind: "granted", turn: m.turn, refused: toThreadError(e) });
      });
    } else if (m.kind === "turn-over") {
      // its writes failing for the storage's sake: the instance is not ready, as when its own fail so
      if (m.writeFailure) o.store.noteWriteFailure?.(m.writeFailure);
      turnsHeld.get(m.turn)?.();
      turnsHeld.delete(m.turn);
    } else if (m.kind === "log") o.log[m.level](m.msg, { ...m.extra, thread: "fleet" });
    else o.onEvents(m.events);
  });
  const gone = (why: string) => {
    if (ended) return;
    ended = true;
    o.log.error(
      `the fleet thread ended (${why}); placement, the cluster gauges and the capacity run on the serving thread`,
    );
    for (const a of asked.values()) a.fail(new Error(`the fleet thread ended (${why})`));
    asked.clear();
    for (const over of turnsHeld.values()) over();
    turnsHeld.clear();
    o.onEnd?.(why);
  };
  worker.on("error", (e) => gone(e.message));
  const exited = new Promise<void>((done) =>
    worker.on("exit", (code) => {
      gone(`exit code ${code}`);
      done();
    }),
  );

  function ask<T>(kind: Ask["kind"], now: number, pace?: number): Promise<T> | undefined {
    if (ended) return undefined;
    const id = ++ids;
    const answer = new Promise<T>((ok, fail) => {
      asked.set(id, { ok: ok as (v: unknown) => void, fail });
      send({ kind, id, now, ...(pace !== undefined && { pace }) });
    });
    asked.get(id)!.answer = answer;
    return answer;
  }

  return {
    place: (now, pace) => ask<PlaceResult>("place", now, pace),
    scrape: (now) => ask<ClusterScrape>("scrape", now),
    capacity: (now) => ask<Capacity>("capacity", now),
    async close() {
      if (ended) return;
      // what was asked finishes first (a placement run commits or rolls back), then the thread closes its database
      await Promise.allSettled([...asked.values()].map((a) => a.answer));
      ended = true;
      send({ kind: "stop" });
      const timer = setTimeout(() => void worker.terminate(), STOP_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** How long after the fleet thread ended it is started again, at first; doubled while it keeps ending soon after. */
const RESTART_MS = 10_000;
/** The longest wait between starts, and how long a thread must have run for the wait to go back to the first. */
const RESTART_MAX_MS = 300_000;

/**
 * Keeps a fleet thread running until `stop` aborts: `start` now, and again when one ends on its own — after `againMs`,
 * doubled at each end after that (up to 5 minutes; back to `againMs` once one ran that long), so that a thread that
 * cannot open the database is not started over and over. Meanwhile its work runs on the serving thread.
 */
export function keepFleetThread(
  start: (onEnd: (why: string) => void) => FleetThread,
  o: { log: Log; stop: AbortSignal; againMs?: number },
): { current(): FleetThread | undefined; close(): Promise<void> } {
  const base = o.againMs ?? RESTART_MS;
  let wait = base;
  let current: FleetThread | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const launch = () => {
    timer = undefined;
    if (o.stop.aborted) return;
    const began = performance.now();
    current = start(() => {
      current = undefined;
      // one that ran a good while starts again at the first wait
      if (performance.now() - began >= RESTART_MAX_MS) wait = base;
      const after = wait;
      wait = Math.min(wait * 2, RESTART_MAX_MS);
      o.log.info(`starting the fleet thread again in ${Math.ceil(after / 1000)} s`, { afterMs: after });
      if (!o.stop.aborted) timer = setTimeout(launch, after);
    });
  };
  o.stop.addEventListener("abort", () => clearTimeout(timer), { once: true });
  launch();
  return { current: () => current, close: async () => current?.close() };
}
