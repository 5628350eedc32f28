// Which ready replica gets a request: least outstanding requests between two random choices, optional session
// affinity, and brief quarantine of endpoints that refused a connection. Per API instance; the counters are
// released on every path a request can end by (the `done` function is idempotent).

import { fnv1a32 } from "../../shared/hash.js";
import type { Balancer, Endpoint } from "./types.js";

/** A stable 32-bit hash of a session id: every instance maps a session to the same replica. */
export const hash32 = fnv1a32;

/**
 * Picks among `endpoints` (quarantined ones only when nothing else is left): the session's replica when it is not
 * overloaded (`slack` requests above the least loaded), else the less loaded of two random choices. Pure.
 */
export function choose(
  endpoints: readonly Endpoint[],
  inflight: (url: string) => number,
  o: { quarantined: (url: string) => boolean; random: () => number; session?: string; slack?: number },
): Endpoint | undefined {
  const healthy = endpoints.filter((e) => !o.quarantined(e.url));
  const pool = healthy.length ? healthy : [...endpoints];
  if (!pool.length) return undefined;
  if (o.session !== undefined) {
    const mine = pool[hash32(o.session) % pool.length]!;
    const least = Math.min(...pool.map((e) => inflight(e.url)));
    if (inflight(mine.url) <= least + (o.slack ?? 4)) return mine;
  }
  if (pool.length === 1) return pool[0];
  const i = Math.floor(o.random() * pool.length);
  const j = (i + 1 + Math.floor(o.random() * (pool.length - 1))) % pool.length;
  const [a, b] = [pool[i]!, pool[j]!];
  return inflight(b.url) < inflight(a.url) ? b : a;
}

/** Outstanding counts and quarantine for one API instance. */
export function createBalancer(o: { now: () => number; random?: () => number; quarantineMs?: number }): Balancer {
  const outstanding = new Map<string, number>();
  const quarantine = new Map<string, number>();
  const inflight = (url: string) => outstanding.get(url) ?? 0;
  const quarantined = (url: string) => {
    const until = quarantine.get(url);
    if (until === undefined) return false;
    if (o.now() < until) return true;
    quarantine.delete(url);
    return false;
  };
  return {
    /** Picks an endpoint not in `exclude` (endpoints already tried by this request). */
    pick(endpoints: readonly Endpoint[], exclude: ReadonlySet<string>, session?: string) {
      return choose(
        endpoints.filter((e) => !exclude.has(e.url)),
        inflight,
        { quarantined, random: o.random ?? Math.random, ...(session !== undefined ? { session } : {}) },
      );
    },
    /** Counts a request to `url` as outstanding; the returned function ends it (once, whatever calls it). */
    begin(url: string): () => void {
      outstanding.set(url, inflight(url) + 1);
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        const n = inflight(url) - 1;
        if (n > 0) outstanding.set(url, n);
        else outstanding.delete(url);
      };
    },
    /** Keeps new requests away from `url` for a short while (it refused or reset a connection). */
    quarantine(url: string) {
      quarantine.set(url, o.now() + (o.quarantineMs ?? 5000));
    },
    inflight,
    /** Every outstanding count (for tests and metrics). */
    outstanding: () => new Map(outstanding),
  };
}
