// /metrics on a Worker: the cluster gauges read from the database at every scrape (the same values every instance
// reports), and this isolate's own router counters and placement durations — per isolate, as Workers keep no memory
// shared between isolates; Prometheus sums them over scrapes only if every isolate is scraped, which it is not.

import type { Q } from "../db/client.js";
import type { Log } from "../log.js";
import { newPlacementCache } from "../placement/rows.js";
import type { RouterMetrics } from "../router/metric-defs.js";
import { ROUTER_METRICS } from "../router/metric-defs.js";
import type { NvlinkCache } from "../views/nvlink.js";
import { PLACEMENT_DURATION, scrapeCluster } from "./cluster-figures.js";
import { clusterText } from "./cluster-text.js";
import { family } from "./exposition.js";

/** This isolate's metrics: what the router records, placement durations, and the text of GET /metrics. */
export function createIsolateMetrics(o: { db: Q; now: () => number; lostAfterS: number; log: Log }) {
  const router = {
    requests: family(ROUTER_METRICS.requests),
    duration: family(ROUTER_METRICS.duration),
    firstByte: family(ROUTER_METRICS.firstByte),
    inflight: family(ROUTER_METRICS.inflight),
    upstreamErrors: family(ROUTER_METRICS.upstreamErrors),
    retries: family(ROUTER_METRICS.retries),
    tokens: family(ROUTER_METRICS.tokens),
    queueDepth: family(ROUTER_METRICS.queueDepth),
    queueWait: family(ROUTER_METRICS.queueWait),
  };
  const placement = family(PLACEMENT_DURATION);
  const placementCache = newPlacementCache();
  const nvlinkCache: NvlinkCache = new Map();
  return {
    router: router satisfies RouterMetrics,
    observePlacement: (seconds: number) => placement.observe({}, seconds),
    async text(): Promise<string> {
      const read = await scrapeCluster(o.db, o.now(), o.lostAfterS, placementCache, nvlinkCache);
      if (!read.figures)
        o.log.warn("metrics: could not read the cluster's state", { error: read.error, databaseUp: read.databaseUp });
      return [await clusterText(read), placement.render(), ...Object.values(router).map((f) => f.render())].join("");
    },
  };
}
