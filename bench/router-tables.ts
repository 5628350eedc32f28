// bench/router.ts's open-loop and closed-loop tables, with the aim at 1,000 req/s and the summary line.
import type { ClosedResult, OpenResult } from "./load.js";
import { median } from "./machine.js";
import { AIM_1000_P50_MS } from "./router-latency.js";

type Cpu = { cpu: number };
const ms = (x: number) => x.toFixed(2);
const sign = (x: number) => `${x < 0 ? "−" : "+"}${ms(Math.abs(x))}`;
const W = [22, 7, 15, 8, 8, 18, 20, 9, 10, 0];
const row = (cells: string[]) =>
  console.log(
    cells
      .map((c, i) => c.padEnd(W[i]!))
      .join("")
      .trimEnd(),
  );
const cpu = (xs: Cpu[]) => (Number.isNaN(xs[0]!.cpu) ? "" : ms(median(xs.map((x) => x.cpu))));

/** Prints the open-loop table (every mode, rate, target), the closed-loop one, the 1,000 req/s aim and a summary. */
export function printLoops<M extends string, T extends string>(o: {
  open: Map<string, (OpenResult & Cpu)[]>;
  closed: Map<string, (ClosedResult & Cpu)[]>;
  id: (mode: M, rate: number, t: T) => string;
  modes: readonly M[];
  rates: number[];
  targets: readonly T[];
  connections: number;
  seconds: number;
  throughputRuns: number;
}) {
  console.log(
    "\nopen loop: latency to the end of the body, ms (median over runs of each run's p50 and p99; added: median of the per-run differences from direct);",
  );
  console.log(
    "gen lag: p99 of how late the generator sent; proxy CPU: ms of CPU the proxy (serve for the router, this process for the node floor, or nginx) used per request",
  );
  row([
    "mode",
    "rate/s",
    "target",
    "sent/s",
    "done/s",
    "p50 / p99",
    "added p50 / p99",
    "gen lag",
    "proxy CPU",
    "errors",
  ]);
  const addedAt1000 = new Map<M, number>();
  for (const mode of o.modes) {
    for (const rate of o.rates) {
      const direct = o.open.get(o.id(mode, rate, "direct" as T))!;
      for (const t of o.targets) {
        const runs = o.open.get(o.id(mode, rate, t))!;
        const med = (k: "p50" | "p99" | "sent" | "done" | "lagP99") => median(runs.map((r) => r[k]));
        const added = (k: "p50" | "p99") => median(runs.map((r, i) => r[k] - direct[i]![k]));
        if (rate === 1000 && t === "router") addedAt1000.set(mode, added("p50"));
        row([
          mode,
          String(rate),
          `${t}${runs.length > 1 ? ` ×${runs.length}` : ""}`,
          med("sent").toFixed(0),
          med("done").toFixed(0),
          `${ms(med("p50"))} / ${ms(med("p99"))}`,
          t === "direct" ? "" : `${sign(added("p50"))} / ${sign(added("p99"))}`,
          ms(med("lagP99")),
          cpu(runs),
          String(runs.reduce((n, r) => n + r.errors, 0)),
        ]);
      }
    }
  }
  if (o.throughputRuns)
    console.log(
      `\nclosed loop, ${o.connections} connections, ${o.seconds} s: requests/s, median of ${o.throughputRuns} (range); proxy CPU ms per request`,
    );
  const rpsOf = new Map<M, number>();
  for (const mode of o.throughputRuns ? o.modes : []) {
    for (const t of o.targets) {
      const runs = o.closed.get(o.id(mode, 0, t))!;
      const rps = runs.map((x) => x.rps);
      if (t === "router") rpsOf.set(mode, median(rps));
      row([
        mode,
        "",
        t,
        median(rps).toFixed(0),
        `(${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)})`,
        "",
        "",
        "",
        cpu(runs),
        String(runs.reduce((n, r) => n + r.errors, 0)),
      ]);
    }
  }
  const ns = addedAt1000.get(o.modes[0]!);
  if (ns !== undefined)
    console.log(
      `\naim: router added p50 ≤ ${AIM_1000_P50_MS} ms at 1,000 req/s (open loop), ${o.modes[0]}: ${sign(ns)} ms — ${ns <= AIM_1000_P50_MS ? "met" : `missed by ${ms(ns - AIM_1000_P50_MS)} ms`}`,
    );
  const summary = [
    ...[...addedAt1000].map(([mode, v]) => `${mode.split(" ")[0]}_added_p50_ms_at_1000=${ms(v)}`),
    ...[...rpsOf].map(([mode, v]) => `${mode.split(" ")[0]}_rps=${v.toFixed(0)}`),
  ];
  if (summary.length) console.log(`router: ${summary.join(" ")}`);
}
