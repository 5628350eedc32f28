// The router's Prometheus metrics, registered on the registry the app's /metrics endpoint serves.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export type RouterMetrics = ReturnType<typeof createRouterMetrics>;

/** Registers the router's metrics on `registry`. */
export function createRouterMetrics(registry: Registry) {
  const registers = [registry];
  return {
    requests: new Counter({ name: "llmgw_router_requests_total", help: "Requests to /v1/*, by model and HTTP status", labelNames: ["model", "code"], registers }),
    duration: new Histogram({
      name: "llmgw_router_request_duration_seconds",
      help: "Time from a request's arrival to the end of its response",
      labelNames: ["model"],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    firstByte: new Histogram({
      name: "llmgw_router_time_to_first_byte_seconds",
      help: "Time from a request's arrival to the engine's response headers",
      labelNames: ["model"],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    inflight: new Gauge({ name: "llmgw_router_inflight", help: "Requests being served now, by model", labelNames: ["model"], registers }),
    upstreamErrors: new Counter({ name: "llmgw_router_upstream_errors_total", help: "Failed calls to engines, by model and kind", labelNames: ["model", "kind"], registers }),
    retries: new Counter({ name: "llmgw_router_retries_total", help: "Requests sent to another replica after one failed before its first byte", registers }),
  };
}
