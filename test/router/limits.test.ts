import { describe, expect, it } from "vitest";
import { createLimiter } from "../../api/router/limits.js";
import type { ApiKeyInfo, LimitDecision } from "../../api/router/types.js";

// a minute's start: buckets are 10 s, so a request at T0 counts until T0 + 70 s, one at T0 + 9.999 s until T0 + 70 s
// too
const T0 = Date.UTC(2026, 10, 30, 12);
const s = (seconds: number) => T0 + seconds * 1000;
const OK: LimitDecision = { ok: true };
const no = (limit: "requests" | "tokens", retryAfterS: number): LimitDecision => ({ ok: false, limit, retryAfterS });

type Step = [at: number, action: "admit" | { spend: number }, expected?: LimitDecision];
const admits = (at: number, n: number): Step[] => Array.from({ length: n }, () => [at, "admit", OK]);

const cases: { name: string; key: Omit<ApiKeyInfo, "name">; steps: Step[] }[] = [
  {
    name: "rpm: refuses the request over the limit until its minute's requests leave the window",
    key: { requestsPerMinute: 3 },
    steps: [
      ...admits(s(0), 3),
      [s(0), "admit", no("requests", 70)],
      [s(30), "admit", no("requests", 40)],
      [s(69.5), "admit", no("requests", 1)],
      [s(70), "admit", OK],
      [s(70), "admit", OK],
      [s(70), "admit", OK],
      [s(70), "admit", no("requests", 70)],
    ],
  },
  {
    name: "rpm: refused requests do not count",
    key: { requestsPerMinute: 1 },
    steps: [
      [s(0), "admit", OK],
      ...Array.from({ length: 5 }, (_, i): Step => [s(10 + i), "admit", no("requests", 60 - i)]),
      [s(70), "admit", OK],
    ],
  },
  {
    name: "rpm: the window slides: the oldest bucket frees first",
    key: { requestsPerMinute: 2 },
    steps: [
      [s(0), "admit", OK],
      [s(35), "admit", OK],
      [s(40), "admit", no("requests", 30)],
      [s(70), "admit", OK],
      [s(71), "admit", no("requests", 29)],
      [s(100), "admit", OK],
    ],
  },
  {
    name: "rpm: no more than the limit in any 60 s, even across a minute's edge",
    key: { requestsPerMinute: 2 },
    steps: [
      [s(59), "admit", OK],
      [s(59.9), "admit", OK],
      [s(60), "admit", no("requests", 60)],
      [s(61), "admit", no("requests", 59)],
      [s(120), "admit", OK],
    ],
  },
  {
    name: "tpm: a request is refused once the window's tokens are spent, until they leave it",
    key: { tokensPerMinute: 1000 },
    steps: [
      [s(0), "admit", OK],
      [s(5), { spend: 600 }],
      [s(5), "admit", OK],
      [s(8), { spend: 399 }],
      [s(8), "admit", OK],
      [s(12), { spend: 1 }],
      [s(12), "admit", no("tokens", 58)],
      [s(69), "admit", no("tokens", 1)],
      [s(70), "admit", OK],
    ],
  },
  {
    name: "tpm: far over the limit (one long answer) waits for the whole window",
    key: { tokensPerMinute: 100 },
    steps: [
      [s(0), "admit", OK],
      [s(20), { spend: 5000 }],
      [s(25), "admit", no("tokens", 65)],
      [s(90), "admit", OK],
    ],
  },
  {
    name: "both limits: the longer wait is the one reported",
    key: { requestsPerMinute: 2, tokensPerMinute: 100 },
    steps: [
      [s(0), "admit", OK],
      [s(0), { spend: 100 }],
      [s(30), "admit", no("tokens", 40)],
      [s(70), "admit", OK],
      [s(70), "admit", OK],
      [s(75), { spend: 150 }],
      [s(75), "admit", no("requests", 65)],
    ],
  },
  {
    name: "a full idle window resets everything",
    key: { requestsPerMinute: 2, tokensPerMinute: 10 },
    steps: [
      [s(0), "admit", OK],
      [s(0), { spend: 50 }],
      [s(1), "admit", no("tokens", 69)],
      [s(600), "admit", OK],
      [s(600), "admit", OK],
    ],
  },
  {
    name: "a clock that steps back counts as the latest time seen (no reset)",
    key: { requestsPerMinute: 1 },
    steps: [
      [s(100), "admit", OK],
      [s(0), "admit", no("requests", 70)],
    ],
  },
  {
    name: "a key without limits is always admitted",
    key: {},
    steps: [...admits(s(0), 1000), [s(0), { spend: 1e9 }], [s(0), "admit", OK]],
  },
];

describe("createLimiter", () => {
  it.each(cases)("$name", ({ key, steps }) => {
    const limiter = createLimiter();
    const k: ApiKeyInfo = { name: "k", ...key };
    steps.forEach(([at, action, expected], i) => {
      if (action === "admit") expect(limiter.admit(k, at), `step ${i} at +${(at - T0) / 1000} s`).toEqual(expected);
      else limiter.spend(k, action.spend, at);
    });
  });

  it("keeps each key's budget apart", () => {
    const limiter = createLimiter();
    const a = { name: "a", requestsPerMinute: 1 };
    const b = { name: "b", requestsPerMinute: 1 };
    expect(limiter.admit(a, s(0))).toEqual(OK);
    expect(limiter.admit(b, s(0))).toEqual(OK);
    expect(limiter.admit(a, s(1)).ok).toBe(false);
  });

  it("forgets keys idle for a whole window: memory stays bounded", () => {
    const limiter = createLimiter();
    for (let i = 0; i < 1000; i++) limiter.admit({ name: `k${i}`, requestsPerMinute: 5 }, s(i / 100));
    expect(limiter.tracked()).toBe(1000);
    limiter.admit({ name: "k0", requestsPerMinute: 5 }, s(50));
    expect(limiter.tracked()).toBe(1000);
    limiter.admit({ name: "late", requestsPerMinute: 5 }, s(81));
    expect(limiter.tracked()).toBe(2); // k0 was seen 31 s ago
    limiter.admit({ name: "late", requestsPerMinute: 5 }, s(200));
    expect(limiter.tracked()).toBe(1);
    expect(createLimiter().admit({ name: "none" }, s(0))).toEqual(OK);
  });

  it("scales with windowMs (for tests of the router with short windows)", () => {
    const limiter = createLimiter({ windowMs: 6000 });
    const k = { name: "fast", requestsPerMinute: 1 };
    expect(limiter.admit(k, s(0))).toEqual(OK);
    expect(limiter.admit(k, s(0))).toEqual(no("requests", 7));
    expect(limiter.admit(k, s(7))).toEqual(OK);
  });
});
