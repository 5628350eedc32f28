// Recent usage rows as the console's charts show them: per served model or per API key, one point per step of a
// window (5 minutes over the last hour, an hour over the last day), with p50/p95 time to first token read from the
// merged histograms. Pure: rows in, series out.
import { BUCKET_MS, HOUR_MS, TTFT_BOUNDS_MS } from "../../shared/schemas/usage.js";
import { type RecentRow, TTFT_COLUMNS } from "../db/usage-recent.js";

export type WindowName = "hour" | "day";

/** A window of time cut into equal steps; `from` is the first step's start, the last step holds `now`. */
export type Window = { name: WindowName; from: number; stepMs: number; steps: number };

const WINDOWS: Record<WindowName, { spanMs: number; stepMs: number }> = {
  hour: { spanMs: HOUR_MS, stepMs: BUCKET_MS },
  day: { spanMs: 24 * HOUR_MS, stepMs: HOUR_MS },
};

/** The window `name` that ends with the step holding `now`. */
export function windowAt(name: WindowName, now: number): Window {
  const { spanMs, stepMs } = WINDOWS[name];
  const steps = spanMs / stepMs;
  return { name, from: (Math.floor(now / stepMs) - steps + 1) * stepMs, stepMs, steps };
}

/** Sums of one step (or of a whole window), with its time-to-first-token histogram. */
export type Point = {
  t: number;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  /** Counts per bucket of TTFT_BOUNDS_MS, the last one over every bound. */
  ttft: number[];
  p50Ms: number | null;
  p95Ms: number | null;
};

export type Series = { name: string; points: Point[]; total: Point };

const emptyPoint = (t: number): Point => ({
  t,
  requests: 0,
  errors: 0,
  promptTokens: 0,
  completionTokens: 0,
  ttft: TTFT_COLUMNS.map(() => 0),
  p50Ms: null,
  p95Ms: null,
});

/**
 * The `q` quantile (0–1) of a histogram in TTFT_BOUNDS_MS buckets, interpolated linearly inside its bucket (from 0 in
 * the first); one in the last, unbounded bucket reads as the highest bound. Null when it holds nothing.
 */
export function quantileMs(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((n, c) => n + c, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    if (c > 0 && below + c >= rank) {
      if (i >= TTFT_BOUNDS_MS.length) return TTFT_BOUNDS_MS[TTFT_BOUNDS_MS.length - 1]!;
      const lower = i === 0 ? 0 : TTFT_BOUNDS_MS[i - 1]!;
      return lower + (TTFT_BOUNDS_MS[i]! - lower) * Math.max(0, (rank - below) / c);
    }
    below += c;
  }
  return TTFT_BOUNDS_MS[TTFT_BOUNDS_MS.length - 1]!;
}

/** Adds a row's sums into a point. */
function addRow(p: Point, r: RecentRow): void {
  p.requests += r.requests;
  p.errors += r.errors;
  p.promptTokens += r.promptTokens;
  p.completionTokens += r.completionTokens;
  TTFT_COLUMNS.forEach((c, i) => {
    p.ttft[i]! += r[c];
  });
}

/** Fills in a point's p50 and p95. */
function withQuantiles(p: Point): Point {
  p.p50Ms = quantileMs(p.ttft, 0.5);
  p.p95Ms = quantileMs(p.ttft, 0.95);
  return p;
}

/**
 * The rows inside the window as one series per model (`by: "model"`) or per key (`by: "key"`), each with a point per
 * step (zeros where nothing was counted) and its total; busiest first, then by name.
 */
export function seriesBy(rows: readonly RecentRow[], by: "model" | "key", w: Window): Series[] {
  const until = w.from + w.steps * w.stepMs;
  const named = new Map<string, Series>();
  for (const r of rows) {
    if (r.bucketStart < w.from || r.bucketStart >= until) continue;
    const name = by === "model" ? r.model : r.keyName;
    let s = named.get(name);
    if (!s) {
      const points = Array.from({ length: w.steps }, (_, i) => emptyPoint(w.from + i * w.stepMs));
      s = { name, points, total: emptyPoint(w.from) };
      named.set(name, s);
    }
    addRow(s.points[Math.floor((r.bucketStart - w.from) / w.stepMs)]!, r);
    addRow(s.total, r);
  }
  const out = [...named.values()];
  for (const s of out) {
    s.points.forEach(withQuantiles);
    withQuantiles(s.total);
  }
  return out.sort((a, b) => b.total.requests - a.total.requests || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** "14:05" for a time (UTC). */
export const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);

/** A latency for people: "740 ms", "2.4 s", "—" for none. */
export const ms = (v: number | null) =>
  v === null ? "—" : v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(v < 10_000 ? 1 : 0)} s`;
