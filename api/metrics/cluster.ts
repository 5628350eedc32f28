// The cluster's gauges on /metrics (Node), rendered from one read of the database at every scrape, beside the
// registry's own metrics (the router's, the process's) and this instance's placement duration histogram.
import { Histogram, type Registry } from "prom-client";
import type { Q } from "../db/client.js";
import type { Log } from "../log.js";
import { newPlacementCache, type PlacementCache } from "../placement/rows.js";
import type { NvlinkCache } from "../views/nvlink.js";
import { type ClusterScrape, PLACEMENT_DURATION, scrapeCluster } from "./cluster-figures.js";
import { clusterText } from "./cluster-text.js";

export type ClusterMetricsOptions = {
  db: Q;
  now: () => number;
  lostAfterS: number;
  log: Log;
  /** Placement's cache of facts derived from unchanged inventories (shared with the app's, when given). */
  placementCache?: PlacementCache;
  /** Reads the cluster elsewhere (Node: on the fleet thread, with its own caches); absent or answering undefined: here. */
  scrape?: (now: number) => Promise<ClusterScrape> | undefined;
};

/**
 * Registers the placement histogram on `registry`; `text()` reads the cluster once and renders its gauges before the
 * registry's metrics. A failed read leaves the cluster gauges without samples and `llmgw_cluster_metrics_up` 0 (and
 * `llmgw_database_up` 0 when it was the database that did not answer), and the rest is still served. Scrapes that
 * arrive while one reads the cluster share its read: at fleet size each costs the event loop hundreds of ms.
 */
export function createClusterMetrics(registry: Registry, o: ClusterMetricsOptions) {
  const placement = new Histogram({
    ...PLACEMENT_DURATION,
    labelNames: [],
    buckets: [...PLACEMENT_DURATION.buckets],
    registers: [registry],
  });
  const placementCache = o.placementCache ?? newPlacementCache();
  const nvlinkCache: NvlinkCache = new Map();
  let reading: Promise<string> | undefined;

  async function cluster(): Promise<string> {
    const now = o.now();
    const read = await (o.scrape?.(now) ?? scrapeCluster(o.db, now, o.lostAfterS, placementCache, nvlinkCache));
    if (!read.figures)
      o.log.warn("metrics: could not read the cluster's state", { error: read.error, databaseUp: read.databaseUp });
    return clusterText(read);
  }

  return {
    observePlacement: (seconds: number) => placement.observe(seconds),
    /** The cluster gauges read now, then the registry's Prometheus text. */
    async text(): Promise<string> {
      reading ??= cluster().finally(() => {
        reading = undefined;
      });
      const gauges = await reading;
      return gauges + (await registry.metrics());
    },
  };
}
