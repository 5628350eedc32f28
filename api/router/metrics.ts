// The router's Prometheus metrics on Node, registered on the prom-client registry the app's /metrics endpoint serves.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { ROUTER_METRICS as M, type RouterMetrics } from "./metric-defs.js";

/** Registers the router's metrics on `registry`. */
export function createRouterMetrics(registry: Registry): RouterMetrics {
  const registers = [registry];
  const of = <T extends { labelNames: readonly string[] }>(d: T) => ({
    ...d,
    labelNames: [...d.labelNames],
    registers,
  });
  return {
    requests: new Counter(of(M.requests)),
    duration: new Histogram({ ...of(M.duration), buckets: [...M.duration.buckets] }),
    firstByte: new Histogram({ ...of(M.firstByte), buckets: [...M.firstByte.buckets] }),
    inflight: new Gauge(of(M.inflight)),
    upstreamErrors: new Counter(of(M.upstreamErrors)),
    retries: new Counter(of(M.retries)),
    tokens: new Counter(of(M.tokens)),
    queueDepth: new Gauge(of(M.queueDepth)),
    queueWait: new Histogram({ ...of(M.queueWait), buckets: [...M.queueWait.buckets] }),
  };
}
