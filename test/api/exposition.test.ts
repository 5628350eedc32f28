import { describe, expect, it } from "vitest";
import { type ClusterFigures, GAUGES } from "../../api/metrics/cluster-figures.js";
import { clusterText } from "../../api/metrics/cluster-text.js";
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

describe("the cluster gauges' text", () => {
  const empty = () =>
    Object.fromEntries(Object.keys(GAUGES).map((k) => [k, [] as { labels: Record<string, string>; value: number }[]]));

  it("renders a fleet's samples in parts exactly as in one piece, in order, each sample once", async () => {
    const figures = empty() as unknown as ClusterFigures;
    // more than two parts of one family, and a node id that needs escaping in the middle of them
    figures.gpuNvlinkJoined = Array.from({ length: 12_345 }, (_, i) => ({
      labels: { node: i === 7000 ? 'odd"node' : `n-${i}`, gpu: String(i % 8), domain: "d.0" },
      value: i % 2,
    }));
    figures.nodeUp = [{ labels: { node: "n-0" }, value: 1 }];
    const text = await clusterText({ databaseUp: true, figures });
    const def = { ...GAUGES.gpuNvlinkJoined, type: "gauge" as const };
    expect(text).toContain(renderFamily(def, figures.gpuNvlinkJoined));
    expect(text.split("\n").filter((l) => l.startsWith("llmgw_gpu_nvlink_joined{"))).toHaveLength(12_345);
    expect(text).toContain('llmgw_gpu_nvlink_joined{node="odd\\"node",gpu="0",domain="d.0"} 0\n');
    expect(text).toMatch(/^llmgw_cluster_metrics_up 1$/m);
    expect(text).toMatch(/^llmgw_database_up 1$/m);
  });

  it("keeps every family without samples when the read failed, and says so", async () => {
    const text = await clusterText({ databaseUp: false, error: "down" });
    for (const g of Object.values(GAUGES)) expect(text).toContain(`# TYPE ${g.name} gauge\n`);
    expect(text).not.toMatch(/^llmgw_node_up/m);
    expect(text).toMatch(/^llmgw_cluster_metrics_up 0$/m);
    expect(text).toMatch(/^llmgw_database_up 0$/m);
  });
});
