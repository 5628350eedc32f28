import { describe, expect, it } from "vitest";
import { backoffMs } from "../../../agent/supervisor/backoff.js";

const B = { baseMs: 1000, maxMs: 30_000 };
const almostOne = 1 - Number.EPSILON;

describe("backoffMs", () => {
  it.each([
    // random() = 0 gives the lower bound: half the exponential delay
    { n: 0, random: 0, ms: 500 },
    { n: 1, random: 0, ms: 500 },
    { n: 2, random: 0, ms: 1000 },
    { n: 3, random: 0, ms: 2000 },
    { n: 5, random: 0, ms: 8000 },
    { n: 6, random: 0, ms: 15_000 }, // 32 s capped at 30 s
    { n: 40, random: 0, ms: 15_000 },
    // random() just below 1 gives (almost) the whole delay, never more
    { n: 1, random: almostOne, ms: 1000 },
    { n: 4, random: almostOne, ms: 8000 },
    { n: 12, random: almostOne, ms: 30_000 },
    { n: 3, random: 0.5, ms: 3000 },
  ])("attempt $n with random() = $random waits $ms ms", ({ n, random, ms }) => {
    expect(backoffMs(n, B, () => random)).toBe(ms);
  });

  it("stays within [0.5, 1) of the capped delay with the real random", () => {
    for (let n = 1; n <= 10; n++) {
      const cap = Math.min(B.maxMs, B.baseMs * 2 ** (n - 1));
      for (let i = 0; i < 50; i++) {
        const ms = backoffMs(n, B);
        expect(ms).toBeGreaterThanOrEqual(cap / 2);
        expect(ms).toBeLessThanOrEqual(cap);
      }
    }
  });
});
