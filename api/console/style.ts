// The console's one stylesheet, served at /admin/static/style.css. It lives in a TypeScript string rather than a .css
// file so that the Worker bundle serves it as well as Node does, without reading files (no node:fs under api/).
// States are always written out in text or an accessible name too: colour only adds to them.
import { fnv1a32 } from "../../shared/hash.js";

export const STYLE = /* css */ `
:root {
  color-scheme: dark;
  --bg: #0d1117; --panel: #161b22; --panel-2: #1c2330; --line: #30363d; --text: #e6edf3; --muted: #9aa7b4;
  --link: #79c0ff; --ok: #3fb950; --ok-glow: rgba(63, 185, 80, .55); --warn: #e3b341; --warn-glow: rgba(227, 179, 65, .5);
  --bad: #ff6b61; --bad-glow: rgba(248, 81, 73, .7); --info: #58a6ff; --idle: #6e7681; --light: #56d4ff;
  --mono: ui-monospace, SFMono-Regular, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible { outline: 2px solid var(--light); outline-offset: 2px; }
code, .mono { font-family: var(--mono); font-size: .92em; }
h1 { font-size: 1.45rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
p { margin: .3rem 0 .6rem; }
.muted { color: var(--muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }

/* top bar */
.top { display: flex; align-items: center; gap: 1.25rem; padding: .55rem 1.25rem; background: var(--panel); border-bottom: 1px solid var(--line); flex-wrap: wrap; }
.brand { font-weight: 700; color: var(--text); text-decoration: none; letter-spacing: .02em; }
.brand span { color: var(--ok); }
.top nav ul { display: flex; gap: .25rem; list-style: none; margin: 0; padding: 0; flex-wrap: wrap; }
.top nav a { display: block; padding: .3rem .7rem; border-radius: 6px; color: var(--muted); text-decoration: none; }
.top nav a:hover { color: var(--text); background: var(--panel-2); }
.top nav a[aria-current="page"] { color: var(--text); background: var(--panel-2); box-shadow: inset 0 -2px 0 var(--light); }
.top form { margin-left: auto; }
main { max-width: 1280px; margin: 0 auto; padding: 1.1rem 1.25rem 2.5rem; }
footer { max-width: 1280px; margin: 0 auto; padding: 0 1.25rem 1.5rem; color: var(--muted); font-size: .85rem; }

/* buttons and forms */
button, .button { font: inherit; color: var(--text); background: var(--panel-2); border: 1px solid var(--line); border-radius: 6px; padding: .35rem .85rem; cursor: pointer; }
button:hover:enabled { border-color: var(--muted); }
button:disabled { opacity: .4; cursor: not-allowed; }
button.danger { border-color: #8e3a36; }
button.primary { background: #1f6feb; border-color: #1f6feb; }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; margin: .6rem 0; }
.actions form { margin: 0; }
input[type=password], input[type=text] { font: inherit; width: 100%; padding: .5rem .6rem; color: var(--text); background: var(--bg); border: 1px solid var(--line); border-radius: 6px; }
.login { max-width: 26rem; margin: 12vh auto; padding: 1.5rem; background: var(--panel); border: 1px solid var(--line); border-radius: 10px; }
.login label { display: block; margin: .8rem 0 .3rem; }
.login button { margin-top: 1rem; width: 100%; }
.notice { padding: .55rem .8rem; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); margin: .6rem 0; }
.notice.error { border-color: var(--bad); }
.notice.done { border-color: var(--ok); }

/* tables, cards, badges */
table { border-collapse: collapse; width: 100%; margin: .3rem 0 1rem; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
caption { text-align: left; color: var(--muted); padding: .2rem 0 .4rem; caption-side: top; }
th, td { text-align: left; padding: .42rem .65rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: .85rem; background: var(--panel-2); }
tbody tr:last-child td, tbody tr:last-child th { border-bottom: 0; }
tbody th { background: none; color: var(--text); font-size: inherit; white-space: nowrap; }
td.mono { white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.cards { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: .75rem; margin: .4rem 0 1rem; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .7rem .9rem; }
.card .big { font-size: 1.7rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.card a { text-decoration: none; }
.grid-2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(26rem, 1fr)); gap: 0 1.5rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: .4rem 0 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
ul.reasons { margin: .2rem 0; padding-left: 1.1rem; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .82rem; font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.badge::before { content: "● "; }
.badge[data-state=ready], .badge[data-state=Ready], .badge[data-state=ok], .badge[data-state=joined], .badge[data-state=in], .badge[data-state=ACTIVE], .badge[data-state=healthy] { color: var(--ok); }
.badge[data-state=cordoned], .badge[data-state=draining], .badge[data-state=starting], .badge[data-state=loading], .badge[data-state=Starting],
.badge[data-state=degraded], .badge[data-state=pending], .badge[data-state=INIT], .badge[data-state=warn] { color: var(--warn); }
.badge[data-state=lost], .badge[data-state=failed], .badge[data-state=Failed], .badge[data-state=out], .badge[data-state=Pending], .badge[data-state=down],
.badge[data-state=DOWN], .badge[data-state=unhealthy], .badge[data-state=absent] { color: var(--bad); }
.badge[data-state=stopped], .badge[data-state=unknown], .badge[data-state=none], .badge[data-state=unverified] { color: var(--idle); }
details.failure summary { cursor: pointer; color: var(--bad); }
pre.log { max-width: 60rem; max-height: 16rem; overflow: auto; white-space: pre-wrap; font-size: .8rem; background: var(--panel); border: 1px solid var(--line); padding: .4rem; }
.problems { color: var(--bad); }
.warning { color: var(--warn); }

/* the GPU-by-GPU NVLink matrix */
table.matrix { width: auto; }
table.matrix caption { white-space: nowrap; }
table.matrix td, table.matrix th { text-align: center; min-width: 3.6rem; font-family: var(--mono); }
table.matrix td.nv { color: var(--ok); font-weight: 700; background: rgba(63, 185, 80, .08); }
table.matrix td.self { color: var(--idle); }
table.matrix td.none { color: var(--idle); }

/* /admin/nvlink: each domain as a rack */
.legend { display: flex; gap: 1rem; flex-wrap: wrap; align-items: center; margin: .5rem 0 1rem; color: var(--muted); }
.legend .chip { width: auto; padding: 0 .5rem; }
.domains { display: flex; flex-wrap: wrap; gap: 2rem; align-items: flex-start; }
.domain { flex: 1 1 40rem; max-width: 62rem; }
.domain > header h2 { margin-bottom: .2rem; }
.rack { position: relative; background: #161a21; border: 2px solid #3a424d; border-radius: 10px; padding: .55rem .6rem .8rem; box-shadow: inset 0 0 0 4px #0b0e12, 0 8px 30px rgba(0, 0, 0, .45); }
.rack::before, .rack::after { content: ""; position: absolute; top: 12px; bottom: 12px; width: 6px; background: repeating-linear-gradient(#2b323c 0 6px, #0b0e12 6px 10px); border-radius: 2px; }
.rack::before { left: 5px; }
.rack::after { right: 5px; }
.switch-band { position: relative; display: flex; align-items: center; justify-content: space-between; gap: .8rem; margin: 0 .7rem .5rem;
  padding: .45rem .8rem; border-radius: 6px; background: linear-gradient(90deg, #16324a, #1d4466 50%, #16324a); border: 1px solid #2f6a99; overflow: hidden; }
.switch-band strong { letter-spacing: .06em; font-size: .85rem; text-transform: uppercase; }
.switch-band .ports { display: flex; gap: 3px; }
.switch-band .ports i { width: 7px; height: 7px; border-radius: 50%; background: var(--light); opacity: .35; animation: port 1.6s ease-in-out infinite; }
.switch-band .ports i:nth-child(3n+1) { animation-delay: .2s; }
.switch-band .ports i:nth-child(3n+2) { animation-delay: .55s; }
.switch-band .ports i:nth-child(5n) { animation-delay: .9s; }
.switch-band[data-state=out] { background: linear-gradient(90deg, #3a1a1a, #5a2222 50%, #3a1a1a); border-color: #a33; }
.switch-band[data-state=out] .ports i { background: var(--bad); }
.rack-body { position: relative; display: grid; grid-template-columns: 14px 1fr; gap: .55rem; margin: 0 .7rem; }
.backplane { position: relative; border-radius: 4px; background: #0a2233; border: 1px solid #1b4a66; overflow: hidden; }
.backplane .light { position: absolute; left: 0; right: 0; top: -40%; height: 40%; background: linear-gradient(transparent, var(--light), transparent);
  animation: flow 2.6s linear infinite; }
.backplane[data-state=out] { background: #2a1010; border-color: #6a2525; }
.backplane[data-state=out] .light { background: linear-gradient(transparent, var(--bad), transparent); animation-duration: 4s; }
/* trays share their columns (subgrid), so numbers, names, states, chips and IMEX line up down the rack */
ol.trays { list-style: none; margin: 0; padding: 0; display: grid; grid-template-columns: repeat(5, auto) minmax(12rem, 1fr); gap: 5px .6rem; }
.tray { position: relative; grid-column: 1 / -1; display: grid; grid-template-columns: subgrid; align-items: center; }
.tray::before { content: ""; position: absolute; left: -.6rem; width: .6rem; top: 50%; height: 2px; background: var(--light); box-shadow: 0 0 6px var(--light); }
.tray[data-state=out]::before { background: var(--bad); box-shadow: none; }
.tray[data-state=degraded]::before { background: var(--warn); box-shadow: none; }
.tray-face { grid-column: 1 / 6; display: grid; grid-template-columns: subgrid; align-items: center; min-height: 2.35rem; padding: .25rem .6rem .25rem .5rem;
  border-radius: 5px; background: #222933; border: 1px solid #3a424d; border-left: 4px solid var(--ok); }
.tray[data-state=out] .tray-face { border-left-color: var(--bad); background: #2b1f23; }
.tray[data-state=degraded] .tray-face { border-left-color: var(--warn); }
.tray-no { font-family: var(--mono); font-size: .8rem; color: var(--muted); }
.tray-node { font-family: var(--mono); font-size: .85rem; max-width: 13rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; text-decoration: none; }
.tray-state { font-size: .78rem; font-weight: 700; text-transform: uppercase; letter-spacing: .04em; }
.tray[data-state=in] .tray-state { color: var(--ok); }
.tray[data-state=out] .tray-state { color: var(--bad); }
.tray[data-state=degraded] .tray-state { color: var(--warn); }
ul.chips { display: flex; gap: 6px; list-style: none; margin: 0; padding: 0; }
.chip { display: inline-flex; align-items: center; justify-content: center; gap: .2rem; width: 2.9rem; height: 1.7rem; border-radius: 4px;
  font: 700 .78rem/1 var(--mono); color: #04140a; background: var(--ok); border: 1px solid #7ee787; box-shadow: 0 0 8px 1px var(--ok-glow); }
.chip[data-state=out] { color: #fff; background: #8e1f1a; border-color: var(--bad); animation: pulse 1.4s ease-in-out infinite; }
.chip[data-state=degraded] { color: #1a1200; background: var(--warn); border-color: #f2cc60; box-shadow: 0 0 8px 1px var(--warn-glow); }
.chip[data-state=unknown] { color: var(--text); background: #30363d; border-color: var(--idle); box-shadow: none; }
.tray-imex { font-size: .78rem; color: var(--muted); white-space: nowrap; }
.tray-imex[data-state=out] { color: var(--bad); }
.tray-why { font-size: .85rem; }
.tray-why ul { margin: 0; padding-left: 1rem; }
.tray[data-state=out] .tray-why { color: #ffb4ae; }
.tray[data-state=degraded] .tray-why { color: #f2cc60; }
.tray[data-state=in] .tray-why { color: var(--muted); }
/* beside a tray, under what keeps it out: warnings that keep it in (IMEX peer list, shards off their transport) */
.tray-why ul.tray-notes { list-style: none; padding-left: 0; color: var(--warn); }
.tray-why ul.tray-notes li::before { content: "! "; font-weight: 700; }
@keyframes flow { from { transform: translateY(0); } to { transform: translateY(350%); } }
@keyframes pulse { 0%, 100% { box-shadow: 0 0 0 0 var(--bad-glow); filter: brightness(.85); } 50% { box-shadow: 0 0 12px 4px var(--bad-glow); filter: brightness(1.25); } }
@keyframes port { 0%, 100% { opacity: .25; } 50% { opacity: 1; } }
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation: none !important; transition: none !important; }
  .backplane .light { top: 0; height: 100%; opacity: .35; }
  .chip[data-state=out] { outline: 2px dashed var(--bad); outline-offset: 1px; }
}
@media (max-width: 760px) {
  ol.trays, .tray, .tray-face { display: flex; flex-wrap: wrap; gap: .4rem; }
  .grid-2 { grid-template-columns: 1fr; }
}

/* the overview's "Needs attention": a glyph and the words say how bad, the colour only adds to them */
.attention ul { list-style: none; margin: .3rem 0 1rem; padding: 0; display: grid; gap: .35rem; }
.attention li { padding: .45rem .7rem; background: var(--panel); border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 6px; overflow-wrap: anywhere; }
.attention li::before { content: "✕ "; color: var(--bad); font-weight: 700; }
.attention li[data-severity=warn] { border-left-color: var(--warn); }
.attention li[data-severity=warn]::before { content: "! "; color: var(--warn); }
tr[data-state=out] th, tr[data-state=out] td { background: #2b1f23; }
td.when { white-space: nowrap; }

/* narrow screens (a 390-pixel phone): tables scroll sideways inside themselves, the page never does */
@media (max-width: 760px) {
  main { padding: .8rem .7rem 2rem; }
  main table { display: block; max-width: 100%; overflow-x: auto; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { overflow-wrap: anywhere; min-width: 0; }
  pre.log { max-width: 100%; }
  .domain { flex-basis: 100%; min-width: 0; }
  .top { gap: .5rem; padding: .5rem .7rem; }
  .top nav a { padding: .3rem .5rem; }
  .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); }
}

/* /admin/usage: SVG charts; each series also has a label, a dash pattern or position, and a table of its numbers */
.switch { display: flex; gap: .4rem; margin: .2rem 0 .8rem; }
.switch a { padding: .3rem .8rem; border: 1px solid var(--line); border-radius: 6px; text-decoration: none; color: var(--muted); }
.switch a[aria-current="page"] { color: var(--text); background: var(--panel-2); border-color: var(--light); }
.usage-series { margin: .8rem 0 1.4rem; }
.usage-series h3 { margin: .2rem 0 .4rem; overflow-wrap: anywhere; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 22rem), 1fr)); gap: .8rem; }
figure.chart { margin: 0; padding: .5rem .6rem; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; min-width: 0; }
figure.chart svg { display: block; width: 100%; height: auto; }
figure.chart text { fill: var(--muted); font-size: 11px; font-family: var(--mono); }
figure.chart text.none { font-size: 13px; }
figure.chart line.axis { stroke: var(--muted); }
figure.chart line.grid { stroke: var(--line); stroke-dasharray: 2 3; }
figure.chart polyline { stroke-width: 2; stroke-linejoin: round; }
figure.chart figcaption { font-size: .85rem; color: var(--muted); display: flex; flex-wrap: wrap; gap: .3rem .8rem; margin-top: .2rem; }
figure.chart .key::before { content: ""; display: inline-block; width: .8em; height: .8em; margin-right: .3em; border-radius: 2px; background: currentColor; vertical-align: -.05em; }
figure.chart details { font-size: .85rem; }
.s-requests { color: var(--info); fill: var(--info); stroke: var(--info); }
.s-errors { color: var(--bad); fill: var(--bad); stroke: var(--bad); }
.s-in { color: var(--ok); stroke: var(--ok); fill: var(--ok); }
.s-out { color: var(--warn); stroke: var(--warn); fill: var(--warn); }
.s-p50 { color: var(--light); stroke: var(--light); fill: var(--light); }
.s-p95 { color: var(--bad); stroke: var(--bad); fill: var(--bad); }
g.s-out polyline, g.s-p95 polyline { stroke-dasharray: 6 3; }
g.series polyline { fill: none; }
`;

/** A short fingerprint of a static file (FNV-1a), put in its URL so that a new build's pages ask for the new one. */
export function fingerprint(text: string): string {
  return fnv1a32(text).toString(36);
}
