// The cluster gauges of /metrics on the crafted fleet (test/helpers/nvlink-fleet.ts), read from the database at scrape
// time; the scrape token; every family with its labels.

import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig } from "../../api/config.js";
import { createClusterMetrics } from "../../api/metrics/cluster.js";
import { createTestApp, silentLog, type TestApp } from "../helpers/app.js";
import {
  DOMAIN,
  declareNvlinkDeployment,
  fleet,
  GB200_CLASS,
  MIG_CLASS,
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
  t.clock.advance(30_000);
});
afterAll(async () => {
  await m.close();
  await t.close();
});

describe("cluster metrics on /metrics", () => {
  it("llmgw_gpu_nvlink_joined: every GPU of the domain's trays, 0 only for tray b's GPU 2", async () => {
    const s = series(await scrape(), "llmgw_gpu_nvlink_joined");
    expect(s).toHaveLength(16);
    expect(s.every((x) => x.labels.domain === DOMAIN)).toBe(true);
    expect(s.filter((x) => x.value === 0).map((x) => x.labels)).toEqual([
      { node: "gb-tray-b", gpu: "2", domain: DOMAIN },
    ]);
    expect(s.some((x) => x.labels.node === "hgx-01" || x.labels.node === "mig-01")).toBe(false);
  });

  it("llmgw_imex_up and llmgw_imex_channels: the trays, tray d down with no channel", async () => {
    const samples = await scrape();
    const up = Object.fromEntries(series(samples, "llmgw_imex_up").map((x) => [x.labels.node, x.value]));
    const channels = Object.fromEntries(series(samples, "llmgw_imex_channels").map((x) => [x.labels.node, x.value]));
    expect(up).toEqual({ "gb-tray-a": 1, "gb-tray-b": 1, "gb-tray-c": 1, "gb-tray-d": 0 });
    expect(channels).toEqual({ "gb-tray-a": 1, "gb-tray-b": 1, "gb-tray-c": 1, "gb-tray-d": 0 });
  });

  it("llmgw_node_up, llmgw_nodes and llmgw_node_heartbeat_age_seconds follow liveness", async () => {
    let samples = await scrape();
    expect(series(samples, "llmgw_node_up").map((x) => [x.labels.node, x.value])).toEqual(
      ["gb-tray-a", "gb-tray-b", "gb-tray-c", "gb-tray-d", "hgx-01", "mig-01"].map((n) => [n, 1]),
    );
    expect(sampleValue(samples, "llmgw_node_heartbeat_age_seconds", { node: "hgx-01" })).toBe(30);
    expect(Object.fromEntries(series(samples, "llmgw_nodes").map((x) => [x.labels.state, x.value]))).toEqual({
      ready: 6,
      cordoned: 0,
      draining: 0,
      lost: 0,
    });
    expect(
      (await m.call("POST", "/api/v1/agents/hgx-01/heartbeat", { token: tokens["hgx-01"], body: {} })).status,
    ).toBe(200);
    t.clock.advance(170_000);
    samples = await scrape();
    expect(sampleValue(samples, "llmgw_node_heartbeat_age_seconds", { node: "hgx-01" })).toBe(170);
    expect(sampleValue(samples, "llmgw_node_heartbeat_age_seconds", { node: "mig-01" })).toBe(200);
    expect(sampleValue(samples, "llmgw_node_up", { node: "mig-01" })).toBe(0);
    expect(sampleValue(samples, "llmgw_node_up", { node: "hgx-01" })).toBe(1);
    expect(sampleValue(samples, "llmgw_nodes", { state: "lost" })).toBe(5);
    t.clock.advance(-170_000);
  });

  it("llmgw_devices by class and state: the placed replica's 8 GB200s used, the rest free", async () => {
    const samples = await scrape();
    const devices = Object.fromEntries(
      series(samples, "llmgw_devices").map((x) => [`${x.labels.class} ${x.labels.state}`, x.value]),
    );
    expect(devices).toEqual({
      [`${MIG_CLASS} free`]: 4,
      [`${MIG_CLASS} used`]: 0,
      [`${MIG_CLASS} unavailable`]: 0,
      [`${GB200_CLASS} free`]: 8,
      [`${GB200_CLASS} used`]: 8,
      [`${GB200_CLASS} unavailable`]: 0,
      "h100-80g free": 8,
      "h100-80g used": 0,
      "h100-80g unavailable": 0,
    });
  });

  it("llmgw_replicas, llmgw_pending_replicas and llmgw_shards follow placement and the agents' reports", async () => {
    let samples = await scrape();
    expect(series(samples, "llmgw_replicas").map((x) => [x.labels.deployment, x.labels.state, x.value])).toEqual([
      ["big", "ready", 0],
      ["big", "degraded", 0],
      ["big", "starting", 1],
      ["big", "failed", 0],
    ]);
    expect(sampleValue(samples, "llmgw_pending_replicas", { deployment: "big" })).toBe(1);
    expect(sampleValue(samples, "llmgw_shards", { state: "unknown" })).toBe(2);
    const shards = (await m.call("GET", "/api/v1/replicas", { token: t.adminToken })).json.items[0].shards as {
      shardId: string;
      nodeId: string;
    }[];
    for (const s of shards) {
      const r = await m.call("POST", `/api/v1/agents/${s.nodeId}/status`, {
        token: tokens[s.nodeId],
        body: { shards: [{ shardId: s.shardId, state: "ready" }] },
      });
      expect(r.status).toBe(200);
    }
    samples = await scrape();
    expect(sampleValue(samples, "llmgw_replicas", { deployment: "big", state: "ready" })).toBe(1);
    expect(sampleValue(samples, "llmgw_replicas", { deployment: "big", state: "starting" })).toBe(0);
    expect(sampleValue(samples, "llmgw_shards", { state: "ready" })).toBe(2);
    expect(sampleValue(samples, "llmgw_shards", { state: "unknown" })).toBe(0);
    expect(series(samples, "llmgw_shard_transport_ok")).toEqual([]);
  });

  it("llmgw_shard_transport_ok says which shard's NCCL left its fabric; the replica counts as degraded, not served", async () => {
    const [ok, bad] = (await m.call("GET", "/api/v1/replicas", { token: t.adminToken })).json.items[0].shards as {
      shardId: string;
      nodeId: string;
      fabric: string;
    }[];
    const expected = bad!.fabric;
    for (const [s, transport] of [
      [ok!, { verdict: "ok", expected, via: "MNNVL", observed: "MNNVL" }],
      [
        bad!,
        { verdict: "degraded", expected, via: "NET/IB", reason: `placed on ${expected}; NCCL uses NET/IB on mlx5_0` },
      ],
    ] as const) {
      const r = await m.call("POST", `/api/v1/agents/${s.nodeId}/status`, {
        token: tokens[s.nodeId],
        body: { shards: [{ shardId: s.shardId, state: "ready", transport }] },
      });
      expect(r.status).toBe(200);
    }
    const samples = await scrape();
    expect(
      series(samples, "llmgw_shard_transport_ok").map((x) => [
        x.labels.shard,
        x.labels.fabric,
        x.labels.observed,
        x.value,
      ]),
    ).toEqual(
      [
        [ok!.shardId, expected, "MNNVL", 1],
        [bad!.shardId, expected, "NET/IB", 0],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    expect(sampleValue(samples, "llmgw_replicas", { deployment: "big", state: "degraded" })).toBe(1);
    expect(sampleValue(samples, "llmgw_replicas", { deployment: "big", state: "ready" })).toBe(0);
    expect(sampleValue(samples, "llmgw_model_ready_replicas", { model: "big" })).toBe(0);
  });

  it("llmgw_placement_duration_seconds counts this instance's placement runs", async () => {
    await m.settle();
    const before = sampleValue(await scrape(), "llmgw_placement_duration_seconds_count")!;
    expect(before).toBeGreaterThanOrEqual(1);
    await m.call("PUT", "/api/v1/deployments/big", {
      token: t.adminToken,
      body: { spec: { model: "big", replicas: 1, pool: "prod" } },
    });
    await m.settle();
    const samples = await scrape();
    expect(sampleValue(samples, "llmgw_placement_duration_seconds_count")).toBe(before + 1);
    expect(sampleValue(samples, "llmgw_pending_replicas", { deployment: "big" })).toBe(0);
  });

  it("drops label sets that vanished: a forgotten node's series go", async () => {
    expect((await m.call("DELETE", "/api/v1/nodes/mig-01", { token: t.adminToken })).status).toBe(204);
    const samples = await scrape();
    expect(samples.some((x) => x.labels.node === "mig-01" || x.labels.class === MIG_CLASS)).toBe(false);
    expect(sampleValue(samples, "llmgw_cluster_metrics_up")).toBe(1);
  });

  it("has every family with its labels, and the router's", async () => {
    const text = (await m.call("GET", "/metrics")).text;
    const types = Object.fromEntries([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => [x[1]!, x[2]!]));
    expect(types).toMatchObject({
      llmgw_gpu_nvlink_joined: "gauge",
      llmgw_imex_up: "gauge",
      llmgw_imex_channels: "gauge",
      llmgw_node_up: "gauge",
      llmgw_nodes: "gauge",
      llmgw_node_heartbeat_age_seconds: "gauge",
      llmgw_devices: "gauge",
      llmgw_replicas: "gauge",
      llmgw_pending_replicas: "gauge",
      llmgw_shards: "gauge",
      llmgw_placement_duration_seconds: "histogram",
      llmgw_cluster_metrics_up: "gauge",
      llmgw_router_requests_total: "counter",
      llmgw_router_request_duration_seconds: "histogram",
      llmgw_router_time_to_first_byte_seconds: "histogram",
      llmgw_router_inflight: "gauge",
    });
    const labels: Record<string, string[]> = {
      llmgw_gpu_nvlink_joined: ["domain", "gpu", "node"],
      llmgw_imex_up: ["node"],
      llmgw_imex_channels: ["node"],
      llmgw_node_up: ["node"],
      llmgw_nodes: ["state"],
      llmgw_node_heartbeat_age_seconds: ["node"],
      llmgw_devices: ["class", "state"],
      llmgw_replicas: ["deployment", "state"],
      llmgw_pending_replicas: ["deployment"],
      llmgw_shards: ["state"],
      llmgw_cluster_metrics_up: [],
      llmgw_placement_duration_seconds_bucket: ["le"],
    };
    const samples = parseMetrics(text);
    for (const [name, want] of Object.entries(labels)) {
      const s = series(samples, name);
      expect(s.length, name).toBeGreaterThan(0);
      for (const x of s) expect(Object.keys(x.labels).sort(), name).toEqual(want);
    }
    expect(new Set(series(samples, "llmgw_devices").map((x) => x.labels.state))).toEqual(
      new Set(["free", "used", "unavailable"]),
    );
    expect(new Set(series(samples, "llmgw_shards").map((x) => x.labels.state))).toEqual(
      new Set(["pending", "starting", "loading", "ready", "draining", "stopped", "failed", "unknown"]),
    );
  });
});

describe("LLMGW_METRICS_TOKEN", () => {
  it("when set, /metrics needs it: 401 problem+json without or with another token, 200 with it", async () => {
    const guarded = metricsApp(t, { metricsToken: "scrape-token-0123456789" });
    try {
      const none = await guarded.call("GET", "/metrics");
      expect(none.status).toBe(401);
      expect(none.headers.get("content-type")).toBe("application/problem+json");
      expect(none.headers.get("www-authenticate")).toMatch(/^Bearer /);
      expect(none.json.code).toBe("unauthorized");
      expect((await guarded.call("GET", "/metrics", { token: "scrape-token-0123456788" })).status).toBe(401);
      expect((await guarded.call("GET", "/metrics", { token: t.adminToken })).status).toBe(401);
      const ok = await guarded.call("GET", "/metrics", { token: "scrape-token-0123456789" });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(sampleValue(parseMetrics(ok.text), "llmgw_cluster_metrics_up")).toBe(1);
    } finally {
      await guarded.close();
    }
  });

  it("is read from the environment, and a short one is refused at start", () => {
    expect(loadServerConfig({ LLMGW_METRICS_TOKEN: "scrape-token-0123456789" })).toMatchObject({
      ok: true,
      config: { metricsToken: "scrape-token-0123456789" },
    });
    const bad = loadServerConfig({ LLMGW_METRICS_TOKEN: "short" });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors).toEqual([expect.stringMatching(/^LLMGW_METRICS_TOKEN: at least 16 characters/)]);
  });

  it("is off by default: /metrics is open", async () => {
    expect((await m.call("GET", "/metrics")).status).toBe(200);
  });
});

describe("a database that cannot be read", () => {
  it("leaves the cluster gauges empty and says so, and the router's metrics are still served", async () => {
    const t2 = await createTestApp();
    const m2 = metricsApp(t2);
    await m2.call("GET", "/metrics");
    await t2.close();
    const r = await m2.call("GET", "/metrics");
    expect(r.status).toBe(200);
    const samples = parseMetrics(r.text);
    expect(sampleValue(samples, "llmgw_cluster_metrics_up")).toBe(0);
    expect(samples.some((x) => x.name === "llmgw_nodes")).toBe(false);
    expect(r.text).toContain("# TYPE llmgw_router_requests_total counter");
    await m2.close();
  });
});

describe("scrapes at once", () => {
  it("share one read of the cluster, with the same text; a later scrape reads again", async () => {
    let selects = 0;
    const counted = new Proxy(t.store.db, {
      get(target, key) {
        const v = Reflect.get(target, key) as unknown;
        if (typeof v !== "function") return v;
        return (...args: unknown[]) => {
          if (key === "select") selects++;
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const cm = createClusterMetrics(new Registry(), { db: counted, now: t.clock.now, lostAfterS: 60, log: silentLog });
    const reads = async (scrapes: number) => {
      const before = selects;
      const texts = await Promise.all(Array.from({ length: scrapes }, () => cm.text()));
      return { texts, selects: selects - before };
    };
    await reads(1); // the first reads every inventory; the ones after only what changed
    const alone = await reads(1);
    const together = await reads(3);
    expect(alone.selects).toBeGreaterThan(0);
    expect(together.selects).toBe(alone.selects);
    expect(new Set(together.texts).size).toBe(1);
    expect(together.texts[0]).toContain("llmgw_cluster_metrics_up 1");
    expect((await reads(1)).selects).toBe(alone.selects);
  });
});

describe("cluster metrics between scrapes", () => {
  it("a heartbeat that changes a card's fabric shows at the next scrape; one with memory only changes nothing", async () => {
    const tray = fleet().find((n) => n.id === "gb-tray-b")!.inventory;
    let samples = await scrape();
    const joined = () =>
      sampleValue(samples, "llmgw_gpu_nvlink_joined", { node: "gb-tray-b", gpu: "2", domain: DOMAIN });
    expect(joined()).toBe(0);
    const card = tray.gpus[2]!;
    const beat = (gpu: object) =>
      m.call("POST", "/api/v1/agents/gb-tray-b/heartbeat", { token: tokens["gb-tray-b"], body: { gpus: [gpu] } });
    expect((await beat({ uuid: card.uuid, memoryUsedMiB: 1234 })).status).toBe(200);
    samples = await scrape();
    expect(joined()).toBe(0);
    const fabric = { ...card.fabric!, state: "Completed", status: "Success" };
    expect((await beat({ uuid: card.uuid, fabric, health: card.health })).status).toBe(200);
    samples = await scrape();
    expect(joined()).toBe(1);
  });
});
