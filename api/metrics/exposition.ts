// A small Prometheus registry for where prom-client cannot run (a Worker: it needs Node's modules): counters, gauges
// and histograms with labels, kept in memory, rendered in the text exposition format. Node uses prom-client.

type Labels = Record<string, string>;
type Kind = "counter" | "gauge" | "histogram";
type Def = { type: Kind; name: string; help: string; labelNames: readonly string[]; buckets?: readonly number[] };
type Series = { labels: Labels; value: number; buckets?: number[]; sum?: number };

const escapeHelp = (s: string) => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const SPECIAL = /[\\\n"]/;
/** A label value as the format quotes it; most (node ids, states) have nothing to escape and are returned as they are. */
const escapeValue = (s: string) =>
  SPECIAL.test(s) ? s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"') : s;
const number = (n: number) => (Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN");

/** `{a="1",b="2"}` (empty for no labels). */
function labelText(labels: Labels, extra?: [string, string]): string {
  // a scrape renders a sample per GPU of the fleet: built by concatenation, without a pair array per sample
  let out = "";
  for (const k in labels) out += `${out ? "," : ""}${k}="${escapeValue(labels[k]!)}"`;
  if (extra) out += `${out ? "," : ""}${extra[0]}="${escapeValue(extra[1])}"`;
  return out ? `{${out}}` : "";
}

/** One metric family as exposition text: HELP, TYPE and its samples. */
export function renderFamily(def: Def, series: Iterable<Series>): string {
  return `# HELP ${def.name} ${escapeHelp(def.help)}\n# TYPE ${def.name} ${def.type}\n${renderSamples(def, series)}`;
}

/** The sample lines of `series` in family `def` (without its HELP and TYPE: a family may be rendered in parts). */
export function renderSamples(def: Def, series: Iterable<Series>): string {
  let out = "";
  for (const s of series) {
    if (def.type !== "histogram") {
      out += `${def.name}${labelText(s.labels)} ${number(s.value)}\n`;
      continue;
    }
    // buckets are cumulative, then +Inf, the sum and the count
    for (const [i, le] of def.buckets!.entries()) {
      out += `${def.name}_bucket${labelText(s.labels, ["le", String(le)])} ${s.buckets![i]}\n`;
    }
    out += `${def.name}_bucket${labelText(s.labels, ["le", "+Inf"])} ${s.value}\n`;
    out += `${def.name}_sum${labelText(s.labels)} ${number(s.sum!)}\n${def.name}_count${labelText(s.labels)} ${s.value}\n`;
  }
  return out;
}

/** A metric family whose series are kept in memory, keyed by their labels. */
export function family(def: Def) {
  const series = new Map<string, Series>();
  const get = (labels: Labels = {}) => {
    const id = def.labelNames.map((n) => labels[n] ?? "").join("\0");
    let s = series.get(id);
    if (!s) {
      s = {
        labels: Object.fromEntries(def.labelNames.map((n) => [n, labels[n] ?? ""])),
        value: 0,
        ...(def.buckets ? { buckets: def.buckets.map(() => 0), sum: 0 } : {}),
      };
      series.set(id, s);
    }
    return s;
  };
  return {
    inc: (labels?: Labels, by = 1) => void (get(labels).value += by),
    dec: (labels?: Labels, by = 1) => void (get(labels).value -= by),
    observe(labels: Labels, value: number) {
      const s = get(labels);
      s.value++;
      s.sum! += value;
      for (const [i, le] of def.buckets!.entries()) if (value <= le) s.buckets![i]!++;
    },
    render: () => renderFamily(def, series.values()),
  };
}
