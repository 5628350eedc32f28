// Which ready replica gets a request: session affinity, then prefix affinity with bounded load, else least outstanding
// requests between two random choices; and brief quarantine of endpoints that refused a connection. Per API instance;
// the counters are released on every path a request can end by (the `done` function is idempotent).

import { fnv1a32 } from "../../shared/hash.js";
import { weight } from "./prefix.js";
import type { Balancer, Endpoint, PrefixPick } from "./types.js";

/** A stable 32-bit hash of a session id: every instance maps a session to the same replica. */
export const hash32 = fnv1a32;

/**
 * The replica of highest rendezvous weight for the prefix key whose outstanding requests, with this one, stay within
 * `loadFactor` × the mean (consistent hashing with bounded loads) or within `slack` of the least loaded replica's:
 * every instance ranks the replicas alike, and a replica joining or leaving moves only the keys it wins or held.
 * Undefined when every replica is over the bound.
 */
export function byPrefix(
  pool: readonly Endpoint[],
  inflight: (url: string) => number,
  prefix: PrefixPick,
): Endpoint | undefined {
  let total = 1;
  let least = Number.POSITIVE_INFINITY;
  for (const e of pool) {
    total += inflight(e.url);
    least = Math.min(least, inflight(e.url));
  }
  const bound = Math.max(Math.ceil((prefix.loadFactor * total) / pool.length), least + prefix.slack + 1);
  let best: Endpoint | undefined;
  let bestWeight = -1;
  for (const e of pool) {
    if (inflight(e.url) + 1 > bound) continue;
    const w = weight(prefix.key, hash32(e.replicaId));
    if (w > bestWeight || (w === bestWeight && best && e.replicaId < best.replicaId)) {
      best = e;
      bestWeight = w;
    }
  }
  return best;
}

/**
 * Picks among `endpoints` (quarantined ones only when nothing else is left): the session's replica when it is not
 * overloaded (`slack` requests above the least loaded); else, with a prefix key, the key's replica within its load
 * bound; else the less loaded of two random choices. Pure.
 */
export function choose(
  endpoints: readonly Endpoint[],
  inflight: (url: string) => number,
  o: {
    quarantined: (url: string) => boolean;
    random: () => number;
    session?: string;
    slack?: number;
    prefix?: PrefixPick;
  },
): Endpoint | undefined {
  const healthy = endpoints.filter((e) => !o.quarantined(e.url));
  const pool = healthy.length ? healthy : [...endpoints];
  if (!pool.length) return undefined;
  if (o.session !== undefined) {
    const mine = pool[hash32(o.session) % pool.length]!;
    const least = Math.min(...pool.map((e) => inflight(e.url)));
    if (inflight(mine.url) <= least + (o.slack ?? 4)) return mine;
  }
  if (o.prefix) {
    const mine = byPrefix(pool, inflight, o.prefix);
    if (mine) return mine;
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
    pick(endpoints, exclude, session, prefix) {
      return choose(exclude.size ? endpoints.filter((e) => !exclude.has(e.url)) : endpoints, inflight, {
        quarantined,
        random: o.random ?? Math.random,
        ...(session !== undefined ? { session } : {}),
        ...(prefix ? { prefix } : {}),
      });
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
