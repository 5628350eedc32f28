// Per-key rate limits: requests and tokens per minute, per API instance (N instances behind a load balancer let a key
// through up to N times its limits; they are not shared through the database, which stays off the hot path).
//
// The window slides in 10-second buckets: what a key used "in the last minute" is the sum of the current bucket and
// the six before it, so anything counted stays counted for 60–70 s. In no 60 s does a key get more than its limit (a
// fixed window lets twice the limit through across a minute's edge), for seven counters per limit instead of a log of
// every request. Counters belong to a key's id, not its name: a key deleted and made again under its old name does not
// inherit them (a rotation keeps them). Pure: the caller passes `now`.
import type { ApiKeyInfo, LimitDecision, Limiter } from "./types.js";

export const WINDOW_MS = 60_000;
const BUCKETS_PER_WINDOW = 6;

type Counter = { bucket: number; counts: number[] };
type KeyState = { requests: Counter; tokens: Counter; lastSeen: number };

/** A limiter for every key of this instance; a key without limits costs nothing. */
export type KeyLimiter = Limiter & {
  /** How many keys (by id) have counters (a key idle for a whole window is dropped). */
  tracked(): number;
};

/** Creates the limiter; `windowMs` is a minute except in tests. */
export function createLimiter(o: { windowMs?: number } = {}): KeyLimiter {
  const windowMs = o.windowMs ?? WINDOW_MS;
  const bucketMs = windowMs / BUCKETS_PER_WINDOW;
  const slots = BUCKETS_PER_WINDOW + 1;
  const slot = (bucket: number) => ((bucket % slots) + slots) % slots;
  const keys = new Map<string, KeyState>();
  let sweptAt = -Infinity;

  const counter = (bucket: number): Counter => ({ bucket, counts: new Array<number>(slots).fill(0) });

  /** Moves a counter on to `bucket`, emptying the buckets it passes. */
  const advance = (c: Counter, bucket: number) => {
    for (let b = c.bucket + 1; b <= bucket && b <= c.bucket + slots; b++) c.counts[slot(b)] = 0;
    c.bucket = Math.max(c.bucket, bucket);
  };

  /** How long from `now` until one more unit fits under `limit`, as the oldest buckets leave the window; 0: it fits. */
  const waitMs = (c: Counter, limit: number, now: number): number => {
    let used = c.counts.reduce((a, b) => a + b, 0);
    for (let b = c.bucket - BUCKETS_PER_WINDOW; used + 1 > limit; b++) {
      used -= c.counts[slot(b)]!;
      if (used + 1 <= limit) return (b + slots) * bucketMs - now;
    }
    return 0;
  };

  /** Drops keys idle for a whole window: their counters could only read zero. */
  const sweep = (now: number) => {
    if (now - sweptAt < windowMs) return;
    sweptAt = now;
    for (const [id, s] of keys) if (now - s.lastSeen >= windowMs + bucketMs) keys.delete(id);
  };

  /** The key's counters moved on to `at` (a time older than one seen before counts as that one). */
  const stateOf = (id: string, at: number): { s: KeyState; now: number } => {
    let s = keys.get(id);
    if (!s)
      keys.set(
        id,
        (s = {
          requests: counter(Math.floor(at / bucketMs)),
          tokens: counter(Math.floor(at / bucketMs)),
          lastSeen: at,
        }),
      );
    const now = Math.max(at, s.lastSeen);
    s.lastSeen = now;
    advance(s.requests, Math.floor(now / bucketMs));
    advance(s.tokens, Math.floor(now / bucketMs));
    return { s, now };
  };

  return {
    admit(key: ApiKeyInfo, at: number): LimitDecision {
      sweep(at);
      const rpm = key.requestsPerMinute;
      const tpm = key.tokensPerMinute;
      if (rpm === undefined && tpm === undefined) return { ok: true };
      const { s, now } = stateOf(key.id ?? key.name, at);
      const requestsWait = rpm === undefined ? 0 : waitMs(s.requests, rpm, now);
      const tokensWait = tpm === undefined ? 0 : waitMs(s.tokens, tpm, now);
      if (requestsWait > 0 || tokensWait > 0) {
        // the longer wait: after it, both fit
        const limit = tokensWait > requestsWait ? "tokens" : "requests";
        return { ok: false, limit, retryAfterS: Math.max(1, Math.ceil(Math.max(requestsWait, tokensWait) / 1000)) };
      }
      if (rpm !== undefined) s.requests.counts[slot(s.requests.bucket)]! += 1;
      return { ok: true };
    },
    spend(key: ApiKeyInfo, tokens: number, at: number): void {
      if (key.tokensPerMinute === undefined || !(tokens > 0)) return;
      const { tokens: c } = stateOf(key.id ?? key.name, at).s;
      c.counts[slot(c.bucket)]! += tokens;
    },
    tracked: () => keys.size,
  };
}
