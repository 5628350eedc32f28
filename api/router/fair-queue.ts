// Fair sharing of a model's replicas between API keys, per API instance (as the rate limits; on Workers, per isolate).
// A request takes a slot for its model before it is sent. A model has `capacity` slots (its ready replicas ×
// the router's in-flight bound per replica) and a key with `maxConcurrent` holds at most that many slots over every
// model. A request that finds no slot waits in its key's queue for the model; when a slot frees, the model's keys are
// served round-robin — the key served goes to the back of the ring — so a key with a thousand requests waiting gets
// one slot in turn with a key that has one, never all of them first. A waiter leaves on its deadline or when its
// client goes away. The clock and the deadline timer are injected (setTimeout unless a test gives its own).
import type { Cancel } from "./failures.js";

export const DEFAULT_MAX_INFLIGHT_PER_REPLICA = 64;
export const DEFAULT_QUEUE_TIMEOUT_MS = 30_000;

/** A held slot; `release` frees it (once, whatever calls it, however often). */
export type Slot = { release(): void };

/** What a request asks for: its key (id), the key's own limit, its model and the model's slots now. */
export type Ask = { key: string; limit?: number | undefined; model: string; capacity: number };

/**
 * How a wait ended: a slot, or a refusal on the deadline (`by`: what was full then, the model's slots or the key's
 * own) or because the client went away.
 */
export type Waited =
  | { slot: Slot; waitedMs: number }
  | { refused: "timeout"; by: "model" | "key"; waitedMs: number }
  | { refused: "aborted"; waitedMs: number };

/** Starts a timer that calls `fn` after `ms`; the function returned stops it. */
export type SetTimer = (fn: () => void, ms: number) => () => void;

export type FairQueue = {
  /** A slot at once when the model has one free and the key is under its limit with nobody of it waiting; else none. */
  tryAcquire(ask: Ask): Slot | undefined;
  /** Waits in the key's queue for the model, served round-robin across keys, until a slot, the deadline or `signal`. */
  wait(ask: Ask, signal: Cancel): Promise<Waited>;
  /** Requests waiting now, for one model or all. */
  waiting(model?: string): number;
  /** Slots held now, for one model or all. */
  active(model?: string): number;
};

type Waiter = { key: string; limit: number | undefined; grant: (slot: Slot) => void };
/** One model's slots and queues; the queues map's order is the round-robin ring (its first key is served next). */
type ModelState = { active: number; capacity: number; queues: Map<string, Waiter[]> };

const realTimer: SetTimer = (fn, ms) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

/** Creates the fair queue of one instance; a request waits at most `timeoutMs` (0: never, a full model refuses). */
export function createFairQueue(o: { now: () => number; timeoutMs: number; setTimer?: SetTimer }): FairQueue {
  const setTimer = o.setTimer ?? realTimer;
  const models = new Map<string, ModelState>();
  const held = new Map<string, number>();
  /** Requests waiting per key, over every model. */
  const queued = new Map<string, number>();
  const addQueued = (key: string, n: number) => {
    const v = (queued.get(key) ?? 0) + n;
    if (v > 0) queued.set(key, v);
    else queued.delete(key);
  };

  const room = (key: string, limit: number | undefined) => limit === undefined || (held.get(key) ?? 0) < limit;

  const stateOf = (ask: Ask): ModelState => {
    let m = models.get(ask.model);
    if (!m) models.set(ask.model, (m = { active: 0, capacity: ask.capacity, queues: new Map() }));
    m.capacity = ask.capacity;
    return m;
  };

  /** Forgets a model with no slot held and nobody waiting (its capacity is told again by the next request). */
  const tidy = (model: string, m: ModelState) => {
    if (m.active === 0 && m.queues.size === 0) models.delete(model);
  };

  const take = (model: string, m: ModelState, key: string): Slot => {
    m.active++;
    held.set(key, (held.get(key) ?? 0) + 1);
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        m.active--;
        const n = (held.get(key) ?? 0) - 1;
        if (n > 0) held.set(key, n);
        else held.delete(key);
        serve(model, m);
        // the key's own slot freed: its requests waiting for other models may go now
        if (queued.has(key)) for (const [other, s] of models) if (s !== m && s.queues.has(key)) serve(other, s);
        tidy(model, m);
      },
    };
  };

  /** Grants free slots to waiters, one per key in ring order; a key at its own limit keeps its place. */
  function serve(model: string, m: ModelState) {
    while (m.active < m.capacity && m.queues.size) {
      let next: [string, Waiter[]] | undefined;
      for (const e of m.queues)
        if (room(e[0], e[1][0]!.limit)) {
          next = e;
          break;
        }
      if (!next) return;
      const [key, queue] = next;
      const w = queue.shift()!;
      addQueued(key, -1);
      m.queues.delete(key);
      if (queue.length) m.queues.set(key, queue);
      w.grant(take(model, m, key));
    }
  }

  /** Takes a waiter out of its queue; false when it is not there any more (granted, or gone before). */
  const remove = (model: string, m: ModelState, w: Waiter): boolean => {
    const queue = m.queues.get(w.key);
    const i = queue ? queue.indexOf(w) : -1;
    if (i < 0) return false;
    queue!.splice(i, 1);
    addQueued(w.key, -1);
    if (!queue!.length) m.queues.delete(w.key);
    tidy(model, m);
    return true;
  };

  const count = (model: string | undefined, of: (m: ModelState) => number) => {
    if (model !== undefined) {
      const m = models.get(model);
      return m ? of(m) : 0;
    }
    let n = 0;
    for (const m of models.values()) n += of(m);
    return n;
  };

  return {
    tryAcquire(ask) {
      const m = stateOf(ask);
      // the model may have more replicas than when its waiters came: they go first
      serve(ask.model, m);
      if (m.active < m.capacity && room(ask.key, ask.limit) && !m.queues.has(ask.key))
        return take(ask.model, m, ask.key);
      tidy(ask.model, m);
      return undefined;
    },
    wait(ask, signal) {
      const at = o.now();
      const waited = () => Math.max(0, o.now() - at);
      if (signal.aborted) return Promise.resolve({ refused: "aborted", waitedMs: 0 });
      return new Promise<Waited>((resolve) => {
        const m = stateOf(ask);
        let settled = false;
        let stopTimer = () => {};
        const onAbort = () => leave("aborted");
        const settle = (w: Waited) => {
          settled = true;
          stopTimer();
          signal.removeListener("abort", onAbort);
          resolve(w);
        };
        const waiter: Waiter = {
          key: ask.key,
          limit: ask.limit,
          grant: (slot) => settle({ slot, waitedMs: waited() }),
        };
        function leave(why: "timeout" | "aborted") {
          if (!remove(ask.model, m, waiter)) return;
          if (why === "aborted") return settle({ refused: "aborted", waitedMs: waited() });
          settle({ refused: "timeout", by: room(ask.key, ask.limit) ? "model" : "key", waitedMs: waited() });
        }
        const queue = m.queues.get(ask.key);
        if (queue) queue.push(waiter);
        else m.queues.set(ask.key, [waiter]);
        addQueued(ask.key, 1);
        serve(ask.model, m);
        if (settled) return;
        if (o.timeoutMs <= 0) return leave("timeout");
        signal.once("abort", onAbort);
        stopTimer = setTimer(() => leave("timeout"), o.timeoutMs);
      });
    },
    waiting: (model) => count(model, (m) => [...m.queues.values()].reduce((n, q) => n + q.length, 0)),
    active: (model) => count(model, (m) => m.active),
  };
}
