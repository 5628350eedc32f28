import { describe, expect, it } from "vitest";
import { family, renderFamily } from "../../api/metrics/exposition.js";

describe("the Worker's exposition renderer", () => {
  it("renders counters and gauges per label set, escaping help and label values", () => {
    const c = family({
      type: "counter",
      name: "x_total",
      help: "Requests\nby \\ model",
      labelNames: ["model", "code"],
    });
    c.inc({ model: 'a"b', code: "200" });
    c.inc({ model: 'a"b', code: "200" }, 2);
    c.inc({ model: "c", code: "502" });
    expect(c.render()).toBe(
      '# HELP x_total Requests\\nby \\\\ model\n# TYPE x_total counter\nx_total{model="a\\"b",code="200"} 3\nx_total{model="c",code="502"} 1\n',
    );
    const g = family({ type: "gauge", name: "inflight", help: "now", labelNames: ["model"] });
    g.inc({ model: "m" });
    g.inc({ model: "m" });
    g.dec({ model: "m" });
    expect(g.render()).toContain('inflight{model="m"} 1\n');
    expect(renderFamily({ type: "gauge", name: "up", help: "h", labelNames: [] }, [{ labels: {}, value: 1 }])).toBe(
      "# HELP up h\n# TYPE up gauge\nup 1\n",
    );
  });

  it("renders histograms with cumulative buckets, +Inf, sum and count", () => {
    const h = family({ type: "histogram", name: "d_seconds", help: "d", labelNames: ["model"], buckets: [0.1, 1] });
    for (const v of [0.05, 0.5, 2]) h.observe({ model: "m" }, v);
    expect(h.render().split("\n")).toEqual([
      "# HELP d_seconds d",
      "# TYPE d_seconds histogram",
      'd_seconds_bucket{model="m",le="0.1"} 1',
      'd_seconds_bucket{model="m",le="1"} 2',
      'd_seconds_bucket{model="m",le="+Inf"} 3',
      'd_seconds_sum{model="m"} 2.55',
      'd_seconds_count{model="m"} 3',
      "",
    ]);
  });
});
