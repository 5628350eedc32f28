// The cluster's gauges on /metrics as prom-client gauges (Node), set from one read of the database at every scrape,
// and this instance's placement duration histogram.
import { Gauge, Histogram, type Registry } from "prom-client";
import type { Q } from "../db/client.js";
import type { Log } from "../log.js";
import { newPlacementCache, type PlacementCache } from "../placement/rows.js";
import type { NvlinkCache } from "../views/nvlink.js";
import { CLUSTER_UP, DATABASE_UP, GAUGES, PLACEMENT_DURATION, scrapeCluster } from "./cluster-figures.js";

export type ClusterMetricsOptions = {
  db: Q;
  now: () => number;
  lostAfterS: number;
  log: Log;
  /** Placement's cache of facts derived from unchanged inventories (shared with the app's, when given). */
  placementCache?: PlacementCache;
};

/**
 * Registers the cluster gauges and the placement histogram on `registry`. `collect()` reads the database once and sets
 * every gauge (reset first, so label sets that vanished disappear); `text()` collects and renders the registry.
 * A failed read leaves the cluster gauges empty and `llmgw_cluster_metrics_up` 0 (and `llmgw_database_up` 0 when it was
 * the database that did not answer), and the rest is still served.
 */
export function createClusterMetrics(registry: Registry, o: ClusterMetricsOptions) {
  const registers = [registry];
  const gauges = Object.fromEntries(
    Object.entries(GAUGES).map(([k, g]) => [k, new Gauge({ ...g, labelNames: [...g.labelNames], registers })]),
  ) as Record<keyof typeof GAUGES, Gauge<string>>;
  const up = new Gauge({ ...CLUSTER_UP, registers });
  const databaseUp = new Gauge({ ...DATABASE_UP, registers });
  const placement = new Histogram({
    ...PLACEMENT_DURATION,
    labelNames: [],
    buckets: [...PLACEMENT_DURATION.buckets],
    registers,
  });
  const placementCache = o.placementCache ?? newPlacementCache();
  const nvlinkCache: NvlinkCache = new Map();

  async function collect(): Promise<void> {
    const now = o.now();
    const read = await scrapeCluster(o.db, now, o.lostAfterS, placementCache, nvlinkCache);
    databaseUp.set(read.databaseUp ? 1 : 0);
    const figures = read.figures;
    if (!figures) {
      o.log.warn("metrics: could not read the cluster's state", { error: read.error, databaseUp: read.databaseUp });
      for (const g of Object.values(gauges)) g.reset();
      up.set(0);
      return;
    }
    for (const [k, g] of Object.entries(gauges) as [keyof typeof GAUGES, Gauge<string>][]) {
      g.reset();
      for (const s of figures[k]) g.set(s.labels, s.value);
    }
    up.set(1);
  }

  return {
    collect,
    observePlacement: (seconds: number) => placement.observe(seconds),
    /** The registry's Prometheus text with the cluster gauges read now. */
    async text(): Promise<string> {
      await collect();
      return registry.metrics();
    },
  };
}
