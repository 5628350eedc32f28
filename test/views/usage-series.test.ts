// The usage charts' pure parts on crafted rows: windows, series per model and key, p50/p95 from merged histograms,
// and the SVG chart (empty data, one point, gaps).
import { describe, expect, it } from "vitest";
import { Chart, niceMax } from "../../api/console/chart.js";
import { noTtft, type RecentRow } from "../../api/db/usage-recent.js";
import { ms, quantileMs, seriesBy, windowAt } from "../../api/views/usage-series.js";
import { BUCKET_MS, HOUR_MS } from "../../shared/schemas/usage.js";

const NOW = Date.UTC(2026, 10, 30, 12, 7, 30); // 12:07:30 UTC
const T = Date.UTC(2026, 10, 30, 12, 5); // the bucket that holds NOW

/** A crafted row: `ttft` lists counts per histogram bucket from the first. */
function row(key: string, model: string, bucketStart: number, o: Partial<RecentRow> & { ttft?: number[] } = {}) {
  const { ttft = [], ...rest } = o;
  const r: RecentRow = {
    keyName: key,
    model,
    bucketStart,
    requests: 1,
    errors: 0,
    promptTokens: 0,
    completionTokens: 0,
    ...noTtft(),
    ...rest,
  };
  ttft.forEach((n, i) => {
    (r as Record<string, unknown>)[`ttft${i}`] = n;
  });
  return r;
}

describe("windowAt", () => {
  it("ends the hour with the 5-minute step holding now, and the day with its hour", () => {
    expect(windowAt("hour", NOW)).toEqual({ name: "hour", from: T - 11 * BUCKET_MS, stepMs: BUCKET_MS, steps: 12 });
    expect(windowAt("day", NOW)).toEqual({
      name: "day",
      from: Date.UTC(2026, 10, 29, 13),
      stepMs: HOUR_MS,
      steps: 24,
    });
  });
});

describe("quantileMs", () => {
  it.each([
    { counts: [], q: 0.5, want: null },
    { counts: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], q: 0.95, want: null },
    // 10 within 50 ms: interpolated from 0
    { counts: [10], q: 0.5, want: 25 },
    // 2 ≤ 50, 2 in (50,100]: the median is the 2nd → the top of the first bucket
    { counts: [2, 2], q: 0.5, want: 50 },
    // 100 in (250,500]: p95 → 250 + 250 × .95
    { counts: [0, 0, 0, 100], q: 0.95, want: 487.5 },
    // the overflow bucket reads as the highest bound
    { counts: [1, 0, 0, 0, 0, 0, 0, 0, 0, 19], q: 0.95, want: 30_000 },
  ])("$counts q=$q → $want", ({ counts, q, want }) => {
    expect(quantileMs(counts, q)).toBe(want);
  });
});

describe("seriesBy", () => {
  const w = windowAt("hour", NOW);
  const rows = [
    row("team-a", "llama", T, { requests: 90, errors: 2, promptTokens: 900, completionTokens: 90, ttft: [0, 90] }),
    // another instance's row for the same model and step (another key): merged with it
    row("team-b", "llama", T, {
      requests: 10,
      errors: 8,
      promptTokens: 100,
      completionTokens: 10,
      ttft: [0, 0, 0, 0, 0, 10],
    }),
    row("team-a", "qwen", T - BUCKET_MS, { requests: 3, ttft: [3] }),
    // outside the window: before its first step
    row("team-a", "llama", w.from - BUCKET_MS, { requests: 1000 }),
  ];

  it("gives one series per model, busiest first, a zero point for every step without rows", () => {
    const s = seriesBy(rows, "model", w);
    expect(s.map((x) => x.name)).toEqual(["llama", "qwen"]);
    const llama = s[0]!;
    expect(llama.points).toHaveLength(12);
    expect(llama.points.slice(0, 11).every((p) => p.requests === 0 && p.p50Ms === null)).toBe(true);
    expect(llama.points[11]).toMatchObject({
      t: T,
      requests: 100,
      errors: 10,
      promptTokens: 1000,
      completionTokens: 100,
    });
    // 90 in (50,100], 10 in (1000,2500]: p50 inside the first, p95 inside the second
    expect(llama.points[11]!.p50Ms).toBeCloseTo(50 + 50 * (50 / 90));
    expect(llama.points[11]!.p95Ms).toBeCloseTo(1000 + 1500 * (5 / 10));
    expect(llama.total).toMatchObject({ requests: 100, errors: 10 });
    expect(s[1]!.points[10]).toMatchObject({ requests: 3, p50Ms: 25 });
  });

  it("gives one series per key, and sums a day's hourly step from its 5-minute buckets", () => {
    const day = windowAt("day", NOW);
    const s = seriesBy(rows, "key", day);
    expect(s.map((x) => [x.name, x.total.requests])).toEqual([
      ["team-a", 1093],
      ["team-b", 10],
    ]);
    // 12:05 and 12:00 in the hour from 12:00; 11:00 in the hour before
    expect(s[0]!.points[23]!.requests).toBe(93);
    expect(s[0]!.points[22]!.requests).toBe(1000);
  });

  it("gives nothing for no rows", () => {
    expect(seriesBy([], "model", w)).toEqual([]);
  });
});

describe("Chart", () => {
  const times = [T - BUCKET_MS, T];
  const svg = (lines: Parameters<typeof Chart>[0]["lines"], kind: "bar" | "line" = "line") =>
    String(Chart({ id: "c", title: "Requests, model llama", desc: "103 requests.", times, lines, kind, format: ms }));

  it("is an image named by its title and description, with UTC times on its axis and a table of its numbers", () => {
    const html = svg([{ label: "p50", cls: "s-p50", values: [740, 2400] }]);
    expect(html).toContain('role="img" aria-labelledby="c-title c-desc"');
    expect(html).toContain('<title id="c-title">Requests, model llama</title><desc id="c-desc">103 requests.</desc>');
    expect(html).toContain(">12:00</text>");
    expect(html).toContain(">12:05</text>");
    expect(html).toContain("<polyline");
    // the axis ends on a round number above the highest value
    expect(html).toContain(">5.0 s</text>");
    expect(html).toContain('<th scope="row">12:05</th><td class="num">2.4 s</td>');
    expect(html).toContain('<td class="num">740 ms</td>');
  });

  it("draws a single point as a dot (no line) and says when nothing was measured", () => {
    const one = svg([{ label: "p50", cls: "s-p50", values: [null, 120] }]);
    expect(one).not.toContain("<polyline");
    expect(one.match(/<circle /g)).toHaveLength(1);
    expect(one).toContain('<td class="num">—</td>');
    const none = svg([{ label: "p50", cls: "s-p50", values: [null, null] }]);
    expect(none).toContain("nothing measured");
    expect(none).not.toContain("<circle");
  });

  it("draws bars only for steps with a count", () => {
    const html = svg([{ label: "requests", cls: "s-requests", values: [0, 7] }], "bar");
    expect(html.match(/<rect /g)).toHaveLength(1);
    expect(html).toContain("<title>requests 12:05: 7 ms</title>");
  });

  it.each([
    [0, 1],
    [7, 10],
    [10, 10],
    [11, 20],
    [2400, 5000],
  ])("niceMax(%d) = %d", (v, want) => expect(niceMax(v)).toBe(want));
});
