// Waiting for a node's assignment index to move. One watcher per API instance reads only the indexes that moved
// (`assign_index > seen`, the highest it saw: indexes come from one sequence that grows in commit order) on a short
// interval, plus the rows of nodes that started waiting since its last look (their index may have moved between the
// poll's read and its wait), and wakes their waiters; a write on this instance wakes them at once.
// When the highest index goes down (the database restored from an older backup), every waiter is woken; so is every
// one when the instance stops (`stop` aborts), and a wait that starts after that answers at once.
import { gt, max } from "drizzle-orm";
import { nextTurn } from "../shared/next-turn.js";
import { assignIndexesOf, assignIndexOf } from "./db/assign-index.js";
import type { Store } from "./db/client.js";
import { nodeAssignIndex as ix } from "./db/schema.js";
import { type NodeAssignment, shardsOfNodes } from "./db/shards.js";

export type AssignmentWaiter = {
  /**
   * Resolves when `nodeId`'s index moves from `index`, after `ms`, or when `signal` aborts — whichever is first; with
   * the node's assignment where the waiter read it on the way (a placement wakes a thousand polls at once: their
   * shards are read together), else with nothing and the poll reads it.
   */
  wait(nodeId: string, index: number, ms: number, signal?: AbortSignal): Promise<NodeAssignment | undefined>;
  /** Something was written on this instance: look now rather than at the next tick. */
  notify(): void;
};

/**
 * Woken polls answered in one turn of the event loop at most (each answer ~0.3 ms of serve's time at fleet size): a
 * change of a thousand nodes is answered in one turn, a larger one in parts with the calls that arrived meanwhile in
 * between. Smaller parts let the first answered agents' own calls — a status report and the next poll each — in
 * before the later parts: at 10,000 agents, in parts of 250, a thousand nodes' answers went out over 0.5–1 s (delivery
 * p99 1.1–1.7 s from the PUT), in one part within ~0.1 s of their median (p99 0.45–0.73 s), with the heartbeats of
 * that moment answered no later.
 */
export const WAKE_PART = 1000;

/** Nodes whose waiting polls answer together when the instance stops. */
const STOP_PART = 500;

type Waiter = { index: number; done: (read?: NodeAssignment) => void };

/** The Node entry's waiter: one shared watcher, ticking only while someone waits, until `stop` aborts. */
export function createPollHub(
  store: Store,
  everyMs = 500,
  onError: (e: unknown) => void = () => {},
  stop?: AbortSignal,
): AssignmentWaiter {
  const waiting = new Map<string, Set<Waiter>>();
  /** Nodes that started waiting since the last look: their rows are read once, whatever the watermark. */
  const joined = new Set<string>();
  /**
   * The nodes the last look read, with their indexes: a poll that read its node before a commit and parks only after
   * the look that found the commit (a placement wakes a thousand polls while others are on their way in) answers at
   * once, rather than at the next look. Only the last look's: a node whose index went back (deleted and registered
   * again) is not answered at once over and over.
   */
  const known = new Map<string, number>();
  let seen: number | undefined;
  let highest = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  /** Told to look while a look was on its way (which may have read before the write): look again at once after it. */
  let again = false;

  async function tick() {
    timer = undefined;
    if (running) {
      again = true;
      return;
    }
    running = true;
    again = false;
    try {
      if (seen === undefined) return;
      const fresh = [...joined];
      joined.clear();
      const moved = await store.db
        .select({ id: ix.nodeId, index: ix.assignIndex })
        .from(ix)
        .where(gt(ix.assignIndex, seen));
      // the watermark moves by the range read only: a joined node's row, read after it, may show a commit the range
      // did not, and going past that commit would skip the other nodes it moved
      for (const m of moved) seen = Math.max(seen, m.index);
      for (let i = 0; i < fresh.length; i += 500)
        moved.push(...(await assignIndexesOf(store.db, fresh.slice(i, i + 500))));
      const woken: { w: Waiter; id: string; index: number }[] = [];
      known.clear();
      for (const m of moved) {
        highest = Math.max(highest, m.index);
        known.set(m.id, m.index);
        // moved on, or below what the poll read (restored between the poll's read and its wait): the poll answers
        for (const w of waiting.get(m.id) ?? []) if (m.index !== w.index) woken.push({ w, id: m.id, index: m.index });
      }
      if (woken.length) {
        // their shards, read after the indexes above, in one go rather than two reads by each woken poll; where that
        // read fails, each poll reads for itself (and answers its own error)
        const shardsBy = await shardsOfNodes(store.db, [...new Set(woken.map((x) => x.id))]).catch(() => undefined);
        for (let i = 0; i < woken.length; i += WAKE_PART) {
          if (i) await nextTurn();
          for (const x of woken.slice(i, i + WAKE_PART)) {
            const shards = shardsBy?.get(x.id);
            x.w.done(shards && { index: x.index, shards });
          }
        }
      }
      // indexes never go down, but for a database replaced by an older backup (or the node holding the highest
      // deleted): every waiter answers now, and the poll tells an agent whose index is ahead to register again
      const [top] = await store.db.select({ index: max(ix.assignIndex) }).from(ix);
      const now = top?.index ?? 0;
      if (now < highest) {
        for (const set of waiting.values()) for (const w of set) w.done();
        seen = now;
      }
      highest = now;
    } catch (e) {
      onError(e);
    } finally {
      running = false;
      // a poll that parked meanwhile set the usual tick: the look asked for goes first
      if (again) {
        clearTimeout(timer);
        timer = undefined;
      }
      schedule(again ? 0 : everyMs);
    }
  }
  function schedule(ms: number) {
    if (timer === undefined && waiting.size && !stop?.aborted) timer = setTimeout(() => void tick(), ms);
  }
  /**
   * Every waiter answers, with the assignments of STOP_PART nodes at a time read together (their indexes, then their
   * shards, as a poll reads them): an instance that stops while 10,000 polls wait had each read for itself (two reads
   * and an answer each, ~1.8 s in one piece). No turn of the event loop between parts: the server cuts what is still
   * open a second after the stop, and every poll should have its answer by then. Where a read fails, those polls read
   * for themselves.
   */
  async function answerAll() {
    const ids = [...waiting.keys()];
    for (let i = 0; i < ids.length; i += STOP_PART) {
      const part = ids.slice(i, i + STOP_PART);
      const read = await assignmentsOf(part).catch(() => undefined);
      for (const id of part) for (const w of [...(waiting.get(id) ?? [])]) w.done(read?.get(id));
    }
  }
  async function assignmentsOf(ids: string[]): Promise<Map<string, NodeAssignment>> {
    const indexes = await assignIndexesOf(store.db, ids);
    const indexOf = new Map(indexes.map((r) => [r.id, r.index]));
    const shardsBy = await shardsOfNodes(store.db, ids);
    // (a node placement never gave shards has no index row: 0)
    return new Map(ids.map((id) => [id, { index: indexOf.get(id) ?? 0, shards: shardsBy.get(id) ?? [] }]));
  }
  stop?.addEventListener(
    "abort",
    () => {
      clearTimeout(timer);
      timer = undefined;
      void answerAll();
    },
    { once: true },
  );

  return {
    wait(nodeId, index, ms, signal) {
      if (stop?.aborted || (known.get(nodeId) ?? index) > index) return Promise.resolve(undefined);
      return new Promise<NodeAssignment | undefined>((resolve) => {
        const set = waiting.get(nodeId) ?? new Set<Waiter>();
        waiting.set(nodeId, set);
        const finish = (read?: NodeAssignment) => {
          clearTimeout(deadline);
          signal?.removeEventListener("abort", ended);
          set.delete(w);
          if (!set.size) waiting.delete(nodeId);
          resolve(read);
        };
        const ended = () => finish();
        const w: Waiter = { index, done: finish };
        set.add(w);
        // a change that landed between the poll's read and now is found by reading this node's row at the next look
        seen ??= index;
        joined.add(nodeId);
        const deadline = setTimeout(ended, ms);
        signal?.addEventListener("abort", ended, { once: true });
        schedule(everyMs);
      });
    },
    notify() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      void tick();
    },
  };
}

/**
 * Where no memory is shared between requests (Workers): each waiting request re-reads its own row, every `everyMs` but
 * at most `maxReads` times over the whole wait (each read is one subrequest on the Worker's budget per request), so
 * a long wait reads less often rather than more in total.
 */
export function createRowPoller(store: Store, o: { everyMs?: number; maxReads?: number } = {}): AssignmentWaiter {
  const everyMs = o.everyMs ?? 1000;
  const maxReads = Math.max(1, o.maxReads ?? Number.POSITIVE_INFINITY);
  return {
    async wait(nodeId, index, ms, signal) {
      const end = Date.now() + ms;
      const step = Math.max(everyMs, Math.ceil(ms / maxReads));
      for (let reads = 0; reads < maxReads && Date.now() < end && !signal?.aborted; reads++) {
        await new Promise((r) => setTimeout(r, Math.min(step, Math.max(0, end - Date.now()))));
        const n = await assignIndexOf(store.db, nodeId);
        if (n === undefined || n > index) return undefined;
      }
      return undefined;
    },
    notify() {},
  };
}
