/** @jsxImportSource hono/jsx */
// A small server-rendered SVG chart (bars or lines over time, UTC on the x axis), with the figures as a table beside
// it: the picture for the eye, a <title>/<desc> for screen readers, and the table for whoever wants the numbers. Pure.
import { hhmm } from "../views/usage-series.js";

export type ChartLine = { label: string; values: readonly (number | null)[]; cls: string };

export type ChartProps = {
  id: string;
  title: string;
  /** One sentence of what it shows, read out in place of the picture. */
  desc: string;
  /** The start of each step (ms). */
  times: readonly number[];
  lines: readonly ChartLine[];
  kind: "bar" | "line";
  /** A value for people ("12", "740 ms"). */
  format: (v: number) => string;
};

const W = 560;
const H = 180;
const LEFT = 64;
const RIGHT = 12;
const TOP = 10;
const BOTTOM = 28;
const PW = W - LEFT - RIGHT;
const PH = H - TOP - BOTTOM;

/** The smallest 1, 2 or 5 × 10ⁿ at or above `v` (1 for nothing), so the axis ends on a round number. */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** Runs of consecutive non-null points (a gap where nothing was measured). */
function runs(values: readonly (number | null)[]): [number, number][][] {
  const out: [number, number][][] = [];
  let run: [number, number][] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (run.length) out.push(run);
      run = [];
    } else run.push([i, v]);
  });
  if (run.length) out.push(run);
  return out;
}

/** A chart of one or more series over the same steps, and their numbers in a table. */
export function Chart(p: ChartProps) {
  const n = p.times.length;
  const all = p.lines.flatMap((l) => l.values.filter((v): v is number => v !== null));
  const max = niceMax(Math.max(0, ...all));
  const slot = PW / Math.max(1, n);
  const x = (i: number) => LEFT + slot * (i + 0.5);
  const y = (v: number) => TOP + PH - (v / max) * PH;
  const every = Math.max(1, Math.ceil(n / 6));
  const barW = (slot * 0.8) / Math.max(1, p.lines.length);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-labelledby={`${p.id}-title ${p.id}-desc`}
        class={`chart-${p.kind}`}
      >
        <title id={`${p.id}-title`}>{p.title}</title>
        <desc id={`${p.id}-desc`}>{p.desc}</desc>
        {(all.length ? [0, max / 2, max] : [0]).map((v) => (
          <g class="tick">
            <line
              x1={LEFT}
              x2={W - RIGHT}
              y1={y(v).toFixed(1)}
              y2={y(v).toFixed(1)}
              class={v === 0 ? "axis" : "grid"}
            />
            <text x={LEFT - 6} y={(y(v) + 4).toFixed(1)} text-anchor="end">
              {p.format(v)}
            </text>
          </g>
        ))}
        {p.times.map((t, i) =>
          i % every === 0 ? (
            <text class="tick" x={x(i).toFixed(1)} y={H - 8} text-anchor="middle">
              {hhmm(t)}
            </text>
          ) : null,
        )}
        {!all.length ? (
          <text class="none" x={LEFT + PW / 2} y={TOP + PH / 2} text-anchor="middle">
            nothing measured
          </text>
        ) : null}
        {p.lines.map((l, k) =>
          p.kind === "bar" ? (
            <g class={`series ${l.cls}`}>
              {l.values.map((v, i) =>
                v ? (
                  <rect
                    x={(x(i) - slot * 0.4 + k * barW).toFixed(1)}
                    y={y(v).toFixed(1)}
                    width={barW.toFixed(1)}
                    height={(TOP + PH - y(v)).toFixed(1)}
                  >
                    <title>{`${l.label} ${hhmm(p.times[i]!)}: ${p.format(v)}`}</title>
                  </rect>
                ) : null,
              )}
            </g>
          ) : (
            <g class={`series ${l.cls}`}>
              {runs(l.values).map((run) =>
                run.length > 1 ? (
                  <polyline
                    fill="none"
                    points={run.map(([i, v]) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ")}
                  />
                ) : null,
              )}
              {runs(l.values)
                .flat()
                .map(([i, v]) => (
                  <circle cx={x(i).toFixed(1)} cy={y(v).toFixed(1)} r="2.5">
                    <title>{`${l.label} ${hhmm(p.times[i]!)}: ${p.format(v)}`}</title>
                  </circle>
                ))}
            </g>
          ),
        )}
      </svg>
      <figcaption>
        {p.title}
        {p.lines.map((l) => (
          <span class={`key ${l.cls}`}>{l.label}</span>
        ))}
      </figcaption>
      <details>
        <summary>Numbers</summary>
        <table>
          <caption>{p.title}</caption>
          <thead>
            <tr>
              <th scope="col">UTC</th>
              {p.lines.map((l) => (
                <th scope="col" class="num">
                  {l.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {p.times.map((t, i) => (
              <tr>
                <th scope="row">{hhmm(t)}</th>
                {p.lines.map((l) => {
                  const v = l.values[i];
                  return <td class="num">{v === null || v === undefined ? "—" : p.format(v)}</td>;
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
