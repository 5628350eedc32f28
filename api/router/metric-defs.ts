// The router's metrics as data (names, help, labels, buckets) and the shape the router records into: prom-client's
// registry serves them on Node (metrics.ts), a small in-isolate one on Workers (../metrics/exposition.ts).

export const ROUTER_METRICS = {
  requests: {
    type: "counter",
    name: "llmgw_router_requests_total",
    help: "Requests to /v1/*, by model and HTTP status",
    labelNames: ["model", "code"],
  },
  duration: {
    type: "histogram",
    name: "llmgw_router_request_duration_seconds",
    help: "Time from a request's arrival to the end of its response",
    labelNames: ["model"],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  },
  firstByte: {
    type: "histogram",
    name: "llmgw_router_time_to_first_byte_seconds",
    help: "Time from a request's arrival to the engine's response headers",
    labelNames: ["model"],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  },
  inflight: {
    type: "gauge",
    name: "llmgw_router_inflight",
    help: "Requests being served now, by model",
    labelNames: ["model"],
  },
  upstreamErrors: {
    type: "counter",
    name: "llmgw_router_upstream_errors_total",
    help: "Failed calls to engines, by model and kind",
    labelNames: ["model", "kind"],
  },
  retries: {
    type: "counter",
    name: "llmgw_router_retries_total",
    help: "Requests sent to another replica after one failed before its first byte",
    labelNames: [],
  },
  queueDepth: {
    type: "gauge",
    name: "llmgw_router_queue_depth",
    help: "Requests waiting in this instance's fair queue for a slot of their model, by model (per API instance)",
    labelNames: ["model"],
  },
  queueWait: {
    type: "histogram",
    name: "llmgw_router_queue_wait_seconds",
    help: "Time requests that found their model or key full waited in this instance's fair queue, whether they got a slot, timed out (429) or left (per API instance)",
    labelNames: ["model"],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  },
  tokens: {
    type: "counter",
    name: "llmgw_router_tokens_total",
    help: "Tokens the engines' responses reported in their usage, by model and kind (prompt, completion)",
    labelNames: ["model", "kind"],
  },
} as const;

/** What the router records (prom-client's Counter, Gauge and Histogram have these methods). */
export type RouterMetrics = {
  requests: { inc(labels: { model: string; code: string }): void };
  duration: { observe(labels: { model: string }, seconds: number): void };
  firstByte: { observe(labels: { model: string }, seconds: number): void };
  inflight: { inc(labels: { model: string }): void; dec(labels: { model: string }): void };
  upstreamErrors: { inc(labels: { model: string; kind: string }): void };
  retries: { inc(): void };
  tokens: { inc(labels: { model: string; kind: "prompt" | "completion" }, count: number): void };
  queueDepth: { inc(labels: { model: string }): void; dec(labels: { model: string }): void };
  queueWait: { observe(labels: { model: string }, seconds: number): void };
};
