// /metrics of a real `llmgw serve` with LLMGW_METRICS_TOKEN, on the crafted fleet (test/helpers/nvlink-fleet.ts) with a
// replica placed and one routed request that failed: the text passes `promtool check metrics` (Debian's prometheus).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/db.js";
import {
  type Call,
  DOMAIN,
  declareNvlinkDeployment,
  httpCall,
  parseMetrics,
  registerFleet,
  sampleValue,
} from "../helpers/nvlink-fleet.js";
import { freePort, startServe, stop, until } from "../helpers/process.js";

const ADMIN = "metrics-e2e-admin-token-0000000000001";
const SCRAPE = "metrics-e2e-scrape-token-01";

const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" });
const havePromtool = !promtool.error && promtool.status === 0;
// CI installs prometheus (.ci/run): there a missing promtool is a failure, not a skip.
const skipPromtool = !havePromtool && !process.env.CI;
if (skipPromtool) {
  console.warn(
    "metrics.test.ts: promtool is not installed, so /metrics is not linted; `apt-get install -y prometheus` brings it",
  );
}

const tmp = tempDir();
let server: Awaited<ReturnType<typeof startServe>>;
const call: Call = httpCall(() => server.url);
const metrics = (token?: string) =>
  fetch(`${server.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

beforeAll(async () => {
  server = await startServe(["--db", join(tmp.dir, "db.sqlite")], {
    env: { LLMGW_ADMIN_TOKEN: ADMIN, LLMGW_METRICS_TOKEN: SCRAPE },
  });
  // engines "listen" on loopback ports nothing listens on: the routed request below fails fast with 502
  const first = await freePort();
  const tokens = await registerFleet(call, ADMIN, { mgmtAddr: "127.0.0.1", portRange: { first, last: first + 20 } });
  await declareNvlinkDeployment(call, ADMIN);
  let shards: { shardId: string; nodeId: string }[] = [];
  await until(
    async () =>
      (shards = (await call("GET", "/api/v1/replicas", { token: ADMIN })).json.items[0]?.shards ?? []).length === 2,
    10_000,
    "the replica placed",
  );
  for (const s of shards)
    await call("POST", `/api/v1/agents/${s.nodeId}/status`, {
      token: tokens[s.nodeId],
      body: { shards: [{ shardId: s.shardId, state: "ready" }] },
    });
  const key = (await call("PUT", "/api/v1/api-keys/scraper", { token: ADMIN, body: { spec: {} } })).json
    .secret as string;
  const chat = { model: "big", messages: [{ role: "user", content: "hi" }] };
  await until(
    async () => (await call("POST", "/v1/chat/completions", { token: key, body: chat })).status === 502,
    10_000,
    "a routed request that fails upstream",
  );
});
afterAll(async () => {
  await stop(server);
  tmp.cleanup();
});

describe("/metrics of llmgw serve", () => {
  it("needs LLMGW_METRICS_TOKEN: 401 without it or with an admin token, 200 with it", async () => {
    expect((await metrics()).status).toBe(401);
    expect((await metrics(ADMIN)).status).toBe(401);
    const ok = await metrics(SCRAPE);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  });

  it("reports the cluster read from the database, the placement runs and the router's request", async () => {
    const samples = parseMetrics(await (await metrics(SCRAPE)).text());
    expect(sampleValue(samples, "llmgw_cluster_metrics_up")).toBe(1);
    expect(sampleValue(samples, "llmgw_gpu_nvlink_joined", { node: "gb-tray-b", gpu: "2", domain: DOMAIN })).toBe(0);
    expect(sampleValue(samples, "llmgw_imex_up", { node: "gb-tray-d" })).toBe(0);
    expect(sampleValue(samples, "llmgw_nodes", { state: "ready" })).toBe(6);
    expect(sampleValue(samples, "llmgw_replicas", { deployment: "big", state: "ready" })).toBe(1);
    expect(sampleValue(samples, "llmgw_pending_replicas", { deployment: "big" })).toBe(1);
    expect(sampleValue(samples, "llmgw_shards", { state: "ready" })).toBe(2);
    expect(sampleValue(samples, "llmgw_placement_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, "llmgw_router_requests_total", { model: "big", code: "502" })).toBeGreaterThanOrEqual(
      1,
    );
  });

  it.skipIf(skipPromtool)("passes `promtool check metrics`", async () => {
    expect(havePromtool, "promtool is not installed (apt-get install -y prometheus)").toBe(true);
    const text = await (await metrics(SCRAPE)).text();
    const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(`${r.stdout}${r.stderr}`.trim(), text).toBe("");
    expect(r.status).toBe(0);
  });
});
