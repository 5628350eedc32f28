/** @jsxImportSource hono/jsx */
// /admin/usage: per served model and per API key, requests, errors, tokens in and out and p50/p95 time to first token
// over the last hour (5-minute steps) or the last day (hourly steps), as charts with their numbers, from the recent
// usage the router writes.
import type { Context } from "hono";
import { readRecentUsage } from "../db/usage-recent.js";
import {
  ms,
  type Point,
  type Series,
  seriesBy,
  type Window,
  type WindowName,
  windowAt,
} from "../views/usage-series.js";
import { Chart } from "./chart.js";
import { page } from "./layout.js";
import type { ConsoleEnv } from "./session.js";

const WINDOW_LABEL: Record<WindowName, string> = { hour: "Last hour", day: "Last day" };
const count = (v: number) => (Number.isInteger(v) ? v.toLocaleString("en-US") : v.toFixed(1));
const errorShare = (p: Point) => (p.requests ? `${((100 * p.errors) / p.requests).toFixed(1)} %` : "—");

/** The totals of each series over the window, one row each. */
function Totals(p: { series: Series[]; what: string; window: Window }) {
  return (
    <table>
      <caption>
        {WINDOW_LABEL[p.window.name]} per {p.what}
      </caption>
      <thead>
        <tr>
          <th scope="col">{p.what}</th>
          <th scope="col" class="num">
            requests
          </th>
          <th scope="col" class="num">
            errors
          </th>
          <th scope="col" class="num">
            error rate
          </th>
          <th scope="col" class="num">
            tokens in
          </th>
          <th scope="col" class="num">
            tokens out
          </th>
          <th scope="col" class="num">
            TTFT p50
          </th>
          <th scope="col" class="num">
            TTFT p95
          </th>
        </tr>
      </thead>
      <tbody>
        {p.series.map((s) => (
          <tr>
            <th scope="row" class="mono">
              {s.name}
            </th>
            <td class="num">{count(s.total.requests)}</td>
            <td class="num">{count(s.total.errors)}</td>
            <td class="num">{errorShare(s.total)}</td>
            <td class="num">{count(s.total.promptTokens)}</td>
            <td class="num">{count(s.total.completionTokens)}</td>
            <td class="num">{ms(s.total.p50Ms)}</td>
            <td class="num">{ms(s.total.p95Ms)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The three charts of one model or key. */
function SeriesCharts(p: { s: Series; what: string; id: string; window: Window }) {
  const { s } = p;
  const times = s.points.map((x) => x.t);
  const over = `${p.what} ${s.name}, ${WINDOW_LABEL[p.window.name].toLowerCase()}`;
  return (
    <article class="usage-series" aria-label={`${p.what} ${s.name}`}>
      <h3 class="mono">{s.name}</h3>
      <div class="charts">
        <Chart
          id={`${p.id}-req`}
          title={`Requests and errors, ${over}`}
          desc={`${s.total.requests} requests, ${s.total.errors} errors.`}
          kind="bar"
          times={times}
          format={count}
          lines={[
            { label: "requests", cls: "s-requests", values: s.points.map((x) => x.requests) },
            { label: "errors", cls: "s-errors", values: s.points.map((x) => x.errors) },
          ]}
        />
        <Chart
          id={`${p.id}-tok`}
          title={`Tokens in and out, ${over}`}
          desc={`${s.total.promptTokens} tokens in, ${s.total.completionTokens} tokens out.`}
          kind="line"
          times={times}
          format={count}
          lines={[
            { label: "tokens in", cls: "s-in", values: s.points.map((x) => x.promptTokens) },
            { label: "tokens out", cls: "s-out", values: s.points.map((x) => x.completionTokens) },
          ]}
        />
        <Chart
          id={`${p.id}-ttft`}
          title={`Time to first token, ${over}`}
          desc={`p50 ${ms(s.total.p50Ms)}, p95 ${ms(s.total.p95Ms)} over the window.`}
          kind="line"
          times={times}
          format={ms}
          lines={[
            { label: "p50", cls: "s-p50", values: s.points.map((x) => x.p50Ms) },
            { label: "p95", cls: "s-p95", values: s.points.map((x) => x.p95Ms) },
          ]}
        />
      </div>
    </article>
  );
}

/** One section: the totals table and each series' charts. */
function Section(p: { title: string; what: string; prefix: string; series: Series[]; window: Window }) {
  return (
    <section aria-labelledby={`${p.prefix}-h`}>
      <h2 id={`${p.prefix}-h`}>{p.title}</h2>
      {p.series.length ? (
        <>
          <Totals series={p.series} what={p.what} window={p.window} />
          {p.series.map((s, i) => (
            <SeriesCharts s={s} what={p.what} id={`${p.prefix}-${i}`} window={p.window} />
          ))}
        </>
      ) : (
        <p class="muted">No requests counted in this window.</p>
      )}
    </section>
  );
}

/** GET /admin/usage[?window=hour|day]. */
export async function usagePage(c: Context<ConsoleEnv>) {
  const now = c.var.deps.now();
  const name: WindowName = c.req.query("window") === "day" ? "day" : "hour";
  const w = windowAt(name, now);
  const rows = await readRecentUsage(c.var.deps.store.db, w.from);
  const step = name === "hour" ? "5-minute" : "hourly";
  return page(
    c,
    { title: "Usage", csrf: c.var.session.csrf, now, section: "/admin/usage", refreshS: 30 },
    <>
      <h1>Usage</h1>
      <nav aria-label="Window" class="switch">
        {(["hour", "day"] as const).map((n) => (
          <a href={`/admin/usage?window=${n}`} aria-current={n === name ? "page" : undefined}>
            {WINDOW_LABEL[n]}
          </a>
        ))}
      </nav>
      <p class="muted">
        In {step} steps (UTC), as the router counts them: every instance writes what it counted every 10 s. Errors are
        answers of status 400 or more and failed upstream calls; time to first token runs from the request's arrival to
        the first byte of the response body, read from a histogram (so within its bucket).
      </p>
      <Section title="Per model" what="model" prefix="m" series={seriesBy(rows, "model", w)} window={w} />
      <Section title="Per API key" what="key" prefix="k" series={seriesBy(rows, "key", w)} window={w} />
    </>,
  );
}
