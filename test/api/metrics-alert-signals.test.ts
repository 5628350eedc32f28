// The families docs/prometheus/alerts.yml and docs/grafana/llmgw.json need beyond the first cluster gauges:
// llmgw_nvlink_tray_eligible, llmgw_model_ready_replicas, llmgw_database_up (Node and Worker) and the router's
// llmgw_router_tokens_total — on the crafted fleet (test/helpers/nvlink-fleet.ts).
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIsolateMetrics } from "../../api/metrics/isolate.js";
import { createRouterMetrics } from "../../api/router/metrics.js";
import { recordUsage } from "../../api/router/request.js";
import type { ApiKeyInfo, RouterDeps } from "../../api/router/types.js";
import { createTestApp, silentLog, type TestApp } from "../helpers/app.js";
import {
  DOMAIN,
  declareNvlinkDeployment,
  metricsApp,
  parseMetrics,
  registerFleet,
  sampleValue,
  scrapeMetrics,
  series,
} from "../helpers/nvlink-fleet.js";

let t: TestApp;
let m: ReturnType<typeof metricsApp>;
let tokens: Record<string, string>;
const scrape = () => scrapeMetrics(m);

beforeAll(async () => {
  t = await createTestApp();
  m = metricsApp(t);
  tokens = await registerFleet(m.call, t.adminToken);
  await declareNvlinkDeployment(m.call, t.adminToken);
  await m.settle();
});
afterAll(async () => {
  await m.close();
  await t.close();
});

describe("llmgw_nvlink_tray_eligible", () => {
  it("is 1 for the trays that can take multi-node shards, 0 for tray b (GPU 2 not joined) and d (IMEX down)", async () => {
    const s = series(await scrape(), "llmgw_nvlink_tray_eligible");
    expect(s.every((x) => x.labels.domain === DOMAIN && Object.keys(x.labels).length === 2)).toBe(true);
    expect(Object.fromEntries(s.map((x) => [x.labels.node, x.value]))).toEqual({
      "gb-tray-a": 1,
      "gb-tray-b": 0,
      "gb-tray-c": 1,
      "gb-tray-d": 0,
    });
  });

  it("goes to 0 for a tray whose node is lost", async () => {
    t.clock.advance(200_000);
    try {
      const s = series(await scrape(), "llmgw_nvlink_tray_eligible");
      expect(s.every((x) => x.value === 0)).toBe(true);
    } finally {
      t.clock.advance(-200_000);
    }
  });
});

describe("llmgw_model_ready_replicas", () => {
  it("is 0 while the placed replica starts, then 1 once every shard reports ready", async () => {
    expect(series(await scrape(), "llmgw_model_ready_replicas")).toEqual([
      { name: "llmgw_model_ready_replicas", labels: { model: "big" }, value: 0 },
    ]);
    const shards = (await m.call("GET", "/api/v1/replicas", { token: t.adminToken })).json.items[0].shards as {
      shardId: string;
      nodeId: string;
    }[];
    for (const s of shards)
      await m.call("POST", `/api/v1/agents/${s.nodeId}/status`, {
        token: tokens[s.nodeId],
        body: { shards: [{ shardId: s.shardId, state: "ready" }] },
      });
    expect(sampleValue(await scrape(), "llmgw_model_ready_replicas", { model: "big" })).toBe(1);
  });

  it("is by served model name, summed over its deployments, and leaves out models asked for no replica", async () => {
    const profile = { name: "one", engine: "vllm", gpuClass: "h100-80g", tp: 1 };
    const put = async (path: string, spec: unknown) =>
      expect((await m.call("PUT", path, { token: t.adminToken, body: { spec } })).status).toBeLessThan(300);
    await put("/api/v1/models/small", { weightsPath: "/models/small", servedName: "small-chat", profiles: [profile] });
    await put("/api/v1/deployments/small-a", { model: "small", replicas: 1, pool: "prod" });
    await put("/api/v1/deployments/small-b", { model: "small", replicas: 1, pool: "prod" });
    await put("/api/v1/models/idle", { weightsPath: "/models/idle", profiles: [profile] });
    await put("/api/v1/deployments/idle", { model: "idle", replicas: 0, pool: "prod" });
    await m.settle();
    const s = series(await scrape(), "llmgw_model_ready_replicas");
    expect(s.map((x) => [x.labels.model, x.value])).toEqual([
      ["big", 1],
      ["small-chat", 0],
    ]);
  });
});

describe("llmgw_database_up", () => {
  it("is 1 with llmgw_cluster_metrics_up while the database answers", async () => {
    const samples = await scrape();
    expect(sampleValue(samples, "llmgw_database_up")).toBe(1);
    expect(sampleValue(samples, "llmgw_cluster_metrics_up")).toBe(1);
  });

  it("is 0 on Node and on a Worker isolate when the database cannot be read, the router's families still served", async () => {
    const t2 = await createTestApp();
    const node = metricsApp(t2);
    const isolate = createIsolateMetrics({ db: t2.store.db, now: t2.clock.now, lostAfterS: 180, log: silentLog });
    expect(sampleValue(parseMetrics(await isolate.text()), "llmgw_database_up")).toBe(1);
    await t2.close();
    try {
      for (const text of [(await node.call("GET", "/metrics")).text, await isolate.text()]) {
        const samples = parseMetrics(text);
        expect(sampleValue(samples, "llmgw_database_up")).toBe(0);
        expect(sampleValue(samples, "llmgw_cluster_metrics_up")).toBe(0);
        expect(samples.some((x) => x.name === "llmgw_model_ready_replicas")).toBe(false);
        expect(text).toContain("# TYPE llmgw_router_tokens_total counter");
      }
    } finally {
      await node.close();
    }
  });
});

describe("llmgw_router_tokens_total", () => {
  it("counts a response's prompt and completion tokens by model (Node's registry and a Worker isolate's)", async () => {
    const registry = new Registry();
    const isolate = createIsolateMetrics({ db: t.store.db, now: t.clock.now, lostAfterS: 180, log: silentLog });
    for (const metrics of [createRouterMetrics(registry), isolate.router]) {
      const r = { metrics, usage: { record() {} }, limiter: { spend() {} } } as unknown as RouterDeps;
      const key = { id: "k", name: "k" } as ApiKeyInfo;
      recordUsage(r, key, "chat", { promptTokens: 7, completionTokens: 5 }, 0);
      recordUsage(r, key, "chat", { promptTokens: 1, completionTokens: 2 }, 0);
      recordUsage(r, key, "chat", undefined, 0);
    }
    for (const text of [await registry.metrics(), await isolate.text()]) {
      const samples = parseMetrics(text);
      expect(sampleValue(samples, "llmgw_router_tokens_total", { model: "chat", kind: "prompt" })).toBe(8);
      expect(sampleValue(samples, "llmgw_router_tokens_total", { model: "chat", kind: "completion" })).toBe(7);
    }
  });
});
