import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { choose, createBalancer, hash32 } from "../../api/router/balancer.js";
import type { Endpoint } from "../../api/router/types.js";

const ep = (n: number): Endpoint => ({
  replicaId: `r${n}`,
  deployment: "d",
  model: "m",
  url: `http://10.0.0.${n}:8000`,
});
const [A, B, C, D] = [ep(1), ep(2), ep(3), ep(4)] as [Endpoint, Endpoint, Endpoint, Endpoint];

/** A `random` that returns `xs` in order and throws once they are used up (so extra draws fail the test). */
const seq = (...xs: number[]) => {
  const left = [...xs];
  return () => {
    if (!left.length) throw new Error("random called more often than expected");
    return left.shift()!;
  };
};
const never = () => {
  throw new Error("random must not be called");
};
const loads = (m: Record<string, number>) => (url: string) => m[url] ?? 0;
const none = () => false;
/** A session id whose endpoint, among `n`, is the `index`th. */
const sessionAt = (index: number, n: number) => {
  for (let i = 0; ; i++) if (hash32(`s${i}`) % n === index) return `s${i}`;
};

describe("hash32", () => {
  // FNV-1a 32-bit reference vectors
  it.each([
    ["", 0x811c9dc5],
    ["a", 0xe40c292c],
    ["foobar", 0xbf9cf968],
  ])("hash32(%j) = %i", (s, h) => {
    expect(hash32(s)).toBe(h);
  });

  it("is an unsigned 32-bit integer, the same on every call", () => {
    for (const s of ["session-1", "x".repeat(1000), "ünïcødé 🦙"]) {
      const h = hash32(s);
      expect(Number.isInteger(h) && h >= 0 && h < 2 ** 32).toBe(true);
      expect(hash32(s)).toBe(h);
    }
  });
});

describe("choose", () => {
  it("returns undefined for no endpoints", () => {
    expect(choose([], loads({}), { quarantined: none, random: never })).toBeUndefined();
    expect(choose([], loads({}), { quarantined: none, random: never, session: "s" })).toBeUndefined();
  });

  it("returns the one endpoint there is, however loaded, without drawing", () => {
    expect(choose([A], loads({ [A.url]: 99 }), { quarantined: none, random: never })).toBe(A);
  });

  // random draws: i = ⌊r1·n⌋, j = (i + 1 + ⌊r2·(n−1)⌋) mod n
  it.each<{ name: string; pool: Endpoint[]; load: Record<string, number>; random: number[]; want: Endpoint }>([
    {
      name: "two endpoints: the less loaded (second choice)",
      pool: [A, B],
      load: { [A.url]: 3, [B.url]: 1 },
      random: [0, 0],
      want: B,
    },
    {
      name: "two endpoints: the less loaded (first choice)",
      pool: [A, B],
      load: { [A.url]: 1, [B.url]: 3 },
      random: [0, 0.9],
      want: A,
    },
    {
      name: "two endpoints, other order of draws",
      pool: [A, B],
      load: { [A.url]: 5, [B.url]: 2 },
      random: [0.99, 0.5],
      want: B,
    },
    {
      name: "a tie goes to the first choice",
      pool: [A, B],
      load: { [A.url]: 2, [B.url]: 2 },
      random: [0.6, 0],
      want: B,
    },
    {
      name: "four endpoints: A and C compared, C less loaded",
      pool: [A, B, C, D],
      load: { [A.url]: 4, [B.url]: 0, [C.url]: 1, [D.url]: 0 },
      random: [0, 0.34],
      want: C,
    },
    {
      name: "four endpoints: D and A compared (wraps), the idle B is not among them",
      pool: [A, B, C, D],
      load: { [A.url]: 9, [B.url]: 0, [C.url]: 4, [D.url]: 7 },
      random: [0.8, 0],
      want: D,
    },
    {
      name: "four endpoints: D and C compared",
      pool: [A, B, C, D],
      load: { [A.url]: 0, [B.url]: 0, [C.url]: 2, [D.url]: 3 },
      random: [0.75, 0.99],
      want: C,
    },
  ])("two random choices: $name", ({ pool, load, random, want }) => {
    expect(choose(pool, loads(load), { quarantined: none, random: seq(...random) })).toBe(want);
  });

  it("two random choices never compare an endpoint with itself (never picks the single most loaded)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 2, maxLength: 8 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (ls, r1, r2) => {
          const pool = ls.map((_, i) => ep(i + 1));
          const load = loads(Object.fromEntries(pool.map((e, i) => [e.url, ls[i]!])));
          const got = choose(pool, load, { quarantined: none, random: seq(r1, r2) })!;
          expect(pool).toContain(got);
          expect(pool.some((e) => e !== got && load(e.url) >= load(got.url))).toBe(true);
        },
      ),
    );
  });

  it("avoids quarantined endpoints while others exist", () => {
    const q = (url: string) => url === A.url || url === B.url;
    const load = loads({ [A.url]: 0, [B.url]: 0, [C.url]: 50 });
    for (const r of [0, 0.3, 0.5, 0.99]) expect(choose([A, B, C], load, { quarantined: q, random: () => r })).toBe(C);
    expect(choose([A, B, C, D], loads({ [C.url]: 5, [D.url]: 1 }), { quarantined: q, random: seq(0, 0) })).toBe(D);
  });

  it("uses quarantined endpoints when nothing else is left", () => {
    const all = () => true;
    expect(choose([A], loads({}), { quarantined: all, random: never })).toBe(A);
    expect(choose([A, B], loads({ [A.url]: 3, [B.url]: 1 }), { quarantined: all, random: seq(0, 0) })).toBe(B);
  });

  describe("session affinity", () => {
    const pool = [A, B, C];

    it("returns the same endpoint for the same session id, without drawing", () => {
      const seen = new Map<string, Endpoint>();
      for (let i = 0; i < 30; i++) {
        const session = `user-${i % 10}`;
        const got = choose(pool, loads({}), { quarantined: none, random: never, session })!;
        expect(got).toBe(pool[hash32(session) % pool.length]);
        if (seen.has(session)) expect(got).toBe(seen.get(session));
        seen.set(session, got);
      }
      expect(new Set(seen.values()).size).toBeGreaterThan(1);
    });

    it.each<{ name: string; mine: number; least: number; slack?: number; affine: boolean }>([
      { name: "default slack 4: 4 above the least loaded stays", mine: 4, least: 0, affine: true },
      { name: "default slack 4: 5 above the least loaded moves", mine: 5, least: 0, affine: false },
      { name: "slack 0: as loaded as the least stays", mine: 2, least: 2, slack: 0, affine: true },
      { name: "slack 0: one above moves", mine: 3, least: 2, slack: 0, affine: false },
      { name: "slack 10: 10 above stays", mine: 12, least: 2, slack: 10, affine: true },
      { name: "slack 10: 11 above moves", mine: 13, least: 2, slack: 10, affine: false },
    ])("$name", ({ mine, least, slack, affine }) => {
      const session = sessionAt(0, 3); // A
      const load = loads({ [A.url]: mine, [B.url]: least, [C.url]: least + 20 });
      // the fallback's draws compare A with B: the less loaded B wins unless A is the session's and affine
      const got = choose(pool, load, {
        quarantined: none,
        random: seq(0, 0),
        session,
        ...(slack !== undefined ? { slack } : {}),
      });
      expect(got).toBe(affine ? A : B);
    });

    it("skips the session's endpoint while it is quarantined", () => {
      const session = sessionAt(0, 3); // A among three
      const got = choose(pool, loads({}), { quarantined: (u) => u === A.url, random: seq(0, 0), session });
      expect(got).not.toBe(A);
    });
  });
});

describe("createBalancer", () => {
  const clock = (t = 1_000_000) => ({ now: () => t, advance: (ms: number) => (t += ms) });

  it("begin() counts outstanding requests; each returned function ends one request, once", () => {
    const b = createBalancer({ now: () => 0 });
    const d1 = b.begin(A.url);
    const d2 = b.begin(A.url);
    const d3 = b.begin(B.url);
    expect(b.inflight(A.url)).toBe(2);
    expect(b.outstanding()).toEqual(
      new Map([
        [A.url, 2],
        [B.url, 1],
      ]),
    );
    d1();
    d1();
    d1();
    expect(b.inflight(A.url)).toBe(1);
    d2();
    expect(b.inflight(A.url)).toBe(0);
    expect(b.outstanding().has(A.url)).toBe(false);
    d3();
    d3();
    expect(b.outstanding()).toEqual(new Map());
  });

  it("counts never go negative, and a new request after that counts from zero", () => {
    const b = createBalancer({ now: () => 0 });
    const d = b.begin(A.url);
    d();
    d();
    expect(b.inflight(A.url)).toBe(0);
    expect(b.outstanding().size).toBe(0);
    const again = b.begin(A.url);
    expect(b.inflight(A.url)).toBe(1);
    d();
    expect(b.inflight(A.url)).toBe(1);
    again();
    expect(b.inflight(A.url)).toBe(0);
  });

  it("counts a request's prompt characters as queued until its response starts, or it ends, once", () => {
    const b = createBalancer({ now: () => 0 });
    const first = b.begin(A.url, 1000);
    const second = b.begin(A.url, 300);
    const none = b.begin(A.url);
    expect(b.queued(A.url)).toBe(1300);
    expect(b.queued(B.url)).toBe(0);
    first.started();
    first.started();
    expect(b.queued(A.url)).toBe(300);
    expect(b.inflight(A.url)).toBe(3);
    // ended before its first byte: its characters leave the queue with it
    second();
    second.started();
    expect(b.queued(A.url)).toBe(0);
    first();
    none.started();
    none();
    expect(b.queued(A.url)).toBe(0);
    expect(b.inflight(A.url)).toBe(0);
  });

  it("pick() holds a prefix request to its key's replica by the queue it counts", () => {
    const b = createBalancer({ now: () => 0, random: () => 0 });
    const pool = [A, B, C];
    const key = 424242;
    const mine = b.pick(pool, new Set(), undefined, { key, loadFactor: 1, slack: 0 })!;
    // one request there, none elsewhere: over the count bound for a request with no text of its own
    const flight = b.begin(mine.url, 10_000);
    const short = { key, loadFactor: 1, slack: 0, own: 100, queueFactor: 4 };
    const long = { ...short, own: 4000 };
    expect(b.pick(pool, new Set(), undefined, short)).not.toBe(mine);
    // 10,000 characters queued there is over 4 × 2,000 but not over 4 × 4,000
    expect(b.pick(pool, new Set(), undefined, { ...long, own: 2000 })).not.toBe(mine);
    expect(b.pick(pool, new Set(), undefined, long)).toBe(mine);
    flight.started();
    expect(b.pick(pool, new Set(), undefined, { ...long, own: 2000 })).toBe(mine);
    // never past twice the count bound, whatever the queue: three more there, and the long one goes elsewhere
    for (let i = 0; i < 3; i++) b.begin(mine.url);
    expect(b.pick(pool, new Set(), undefined, long)).not.toBe(mine);
  });

  it("outstanding() is a copy", () => {
    const b = createBalancer({ now: () => 0 });
    b.begin(A.url);
    b.outstanding().set(A.url, 99);
    expect(b.inflight(A.url)).toBe(1);
  });

  it("pick() prefers the less loaded of two, by the counts begin() keeps", () => {
    const b = createBalancer({ now: () => 0, random: () => 0 });
    b.begin(A.url);
    expect(b.pick([A, B], new Set())).toBe(B);
    b.begin(B.url);
    b.begin(B.url);
    expect(b.pick([A, B], new Set())).toBe(A);
  });

  it.each([
    { name: "the given quarantineMs", quarantineMs: 1000 as number | undefined, lasts: 1000 },
    { name: "5 s by default", quarantineMs: undefined, lasts: 5000 },
  ])("quarantine() keeps new requests away for $name, with the injected clock", ({ quarantineMs, lasts }) => {
    const c = clock();
    const b = createBalancer({ now: c.now, random: () => 0, ...(quarantineMs !== undefined ? { quarantineMs } : {}) });
    b.begin(B.url); // B is busier, so A wins whenever it may be picked
    expect(b.pick([A, B], new Set())).toBe(A);
    b.quarantine(A.url);
    expect(b.pick([A, B], new Set())).toBe(B);
    c.advance(lasts - 1);
    expect(b.pick([A, B], new Set())).toBe(B);
    c.advance(1);
    expect(b.pick([A, B], new Set())).toBe(A);
  });

  it("a quarantined endpoint is still picked when it is the only one", () => {
    const b = createBalancer({ now: () => 0 });
    b.quarantine(A.url);
    expect(b.pick([A], new Set())).toBe(A);
  });

  it("pick() never returns an endpoint the request already tried", () => {
    const b = createBalancer({ now: () => 0, random: () => 0 });
    b.begin(B.url);
    b.begin(B.url);
    expect(b.pick([A, B], new Set([A.url]))).toBe(B);
    expect(b.pick([A, B, C], new Set([A.url, C.url]))).toBe(B);
    expect(b.pick([A, B], new Set([A.url, B.url]))).toBeUndefined();
  });

  it("pick() follows the session id", () => {
    const b = createBalancer({ now: () => 0, random: never });
    const session = sessionAt(2, 3);
    expect(b.pick([A, B, C], new Set(), session)).toBe(C);
    expect(b.pick([A, B, C], new Set(), session)).toBe(C);
  });
});
