// /metrics on a Worker: the cluster gauges read from the database at every scrape (the same values every instance
// reports), and this isolate's own router counters and placement durations — per isolate, as Workers keep no memory
// shared between isolates; Prometheus sums them over scrapes only if every isolate is scraped, which it is not.

import type { Q } from "../db/client.js";
import type { Log } from "../log.js";
import type { FactsCache } from "../placement/input.js";
import type { RouterMetrics } from "../router/metric-defs.js";
import { ROUTER_METRICS } from "../router/metric-defs.js";
import type { NvlinkCache } from "../views/nvlink.js";
import { CLUSTER_UP, type ClusterFigures, GAUGES, PLACEMENT_DURATION, readClusterFigures } from "./cluster-figures.js";
import { family, renderFamily } from "./exposition.js";

/** This isolate's metrics: what the router records, placement durations, and the text of GET /metrics. */
export function createIsolateMetrics(o: { db: Q; now: () => number; lostAfterS: number; log: Log }) {
  const router = {
    requests: family(ROUTER_METRICS.requests),
    duration: family(ROUTER_METRICS.duration),
    firstByte: family(ROUTER_METRICS.firstByte),
    inflight: family(ROUTER_METRICS.inflight),
    upstreamErrors: family(ROUTER_METRICS.upstreamErrors),
    retries: family(ROUTER_METRICS.retries),
  };
  const placement = family(PLACEMENT_DURATION);
  const factsCache: FactsCache = new Map();
  const nvlinkCache: NvlinkCache = new Map();
  return {
    router: router satisfies RouterMetrics,
    observePlacement: (seconds: number) => placement.observe({}, seconds),
    async text(): Promise<string> {
      let figures: ClusterFigures | undefined;
      try {
        figures = await readClusterFigures(o.db, o.now(), o.lostAfterS, factsCache, nvlinkCache);
      } catch (e) {
        o.log.warn("metrics: could not read the cluster's state", { error: String(e) });
      }
      const cluster = figures
        ? Object.entries(GAUGES).map(([k, g]) =>
            renderFamily({ ...g, type: "gauge" }, figures[k as keyof ClusterFigures]),
          )
        : [];
      const up = renderFamily({ ...CLUSTER_UP, type: "gauge", labelNames: [] }, [
        { labels: {}, value: figures ? 1 : 0 },
      ]);
      return [...cluster, up, placement.render(), ...Object.values(router).map((f) => f.render())].join("");
    },
  };
}
