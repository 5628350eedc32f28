// Which ready replica gets a request: session affinity, then prefix affinity with bounded load, else least outstanding
// requests between two random choices; and brief quarantine of endpoints that refused a connection. Per API instance;
// the counters are released on every path a request can end by (the `done` function is idempotent).

import { fnv1a32 } from "../../shared/hash.js";
import { weight } from "./prefix.js";
import type { Balancer, Endpoint, Flight, PrefixPick } from "./types.js";

/** A stable 32-bit hash of a session id: every instance maps a session to the same replica. */
export const hash32 = fnv1a32;

/**
 * The replica of highest rendezvous weight for the prefix key whose outstanding requests, with this one, stay within
 * `loadFactor` × the mean (consistent hashing with bounded loads) or within `slack` of the least loaded replica's, or
 * — up to twice that bound — whose queue of prompts not yet begun (`queued`, in characters) is at most `queueFactor` ×
 * the request's own characters longer than the shortest: a request whose own text is long — a conversation's history,
 * a pasted document — waits behind others' prefills up to a few times what its own would cost elsewhere. Every
 * instance ranks the replicas alike, and a replica joining or leaving moves only the keys it wins or held. Undefined
 * when every replica is over the bound.
 */
export function byPrefix(
  pool: readonly Endpoint[],
  inflight: (url: string) => number,
  prefix: PrefixPick,
  queued: (url: string) => number = () => 0,
): Endpoint | undefined {
  let total = 1;
  let least = Number.POSITIVE_INFINITY;
  let shortest = Number.POSITIVE_INFINITY;
  for (const e of pool) {
    total += inflight(e.url);
    least = Math.min(least, inflight(e.url));
    shortest = Math.min(shortest, queued(e.url));
  }
  const bound = Math.max(Math.ceil((prefix.loadFactor * total) / pool.length), least + prefix.slack + 1);
  const wait = (prefix.queueFactor ?? 0) * (prefix.own ?? 0);
  let best: Endpoint | undefined;
  let bestWeight = -1;
  for (const e of pool) {
    const n = inflight(e.url) + 1;
    if (n > bound && !(n <= 2 * bound && wait > 0 && queued(e.url) - shortest <= wait)) continue;
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
    /** Characters of prompts not yet begun on each endpoint (Balancer.queued), for the prefix's bound. */
    queued?: (url: string) => number;
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
    const mine = byPrefix(pool, inflight, o.prefix, o.queued);
    if (mine) return mine;
  }
  if (pool.length === 1) return pool[0];
  const i = Math.floor(o.random() * pool.length);
  const j = (i + 1 + Math.floor(o.random() * (pool.length - 1))) % pool.length;
  const [a, b] = [pool[i]!, pool[j]!];
  return inflight(b.url) < inflight(a.url) ? b : a;
}

/** Outstanding counts, prompts not yet begun, and quarantine for one API instance. */
export function createBalancer(o: { now: () => number; random?: () => number; quarantineMs?: number }): Balancer {
  const outstanding = new Map<string, number>();
  const waiting = new Map<string, number>();
  const quarantine = new Map<string, number>();
  const inflight = (url: string) => outstanding.get(url) ?? 0;
  const queued = (url: string) => waiting.get(url) ?? 0;
  const add = (map: Map<string, number>, url: string, n: number) => {
    const v = (map.get(url) ?? 0) + n;
    if (v > 0) map.set(url, v);
    else map.delete(url);
  };
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
        ...(prefix ? { prefix, queued } : {}),
      });
    },
    begin(url: string, chars = 0): Flight {
      add(outstanding, url, 1);
      let waits = chars > 0;
      if (waits) add(waiting, url, chars);
      const started = () => {
        if (waits) add(waiting, url, -chars);
        waits = false;
      };
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        started();
        add(outstanding, url, -1);
      };
      return Object.assign(end, { started });
    },
    /** Keeps new requests away from `url` for a short while (it refused or reset a connection). */
    quarantine(url: string) {
      quarantine.set(url, o.now() + (o.quarantineMs ?? 5000));
    },
    inflight,
    queued,
    /** Every outstanding count (for tests and metrics). */
    outstanding: () => new Map(outstanding),
  };
}
