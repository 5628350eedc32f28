// docs/prometheus/alerts.yml and docs/grafana/llmgw.json against the real thing: the rules pass `promtool check rules`
// and their unit tests (docs/prometheus/alerts.test.yml, `promtool test rules`), every dashboard query is PromQL that
// promtool parses, and every llmgw_ metric the dashboard and the rules name is served, with samples, by the /metrics of
// a real `llmgw serve` on the crafted fleet (test/helpers/nvlink-fleet.ts): a replica placed and ready on a mock engine,
// one request answered and one that failed upstream.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { tempDir } from "../helpers/db.js";
import { type Call, declareNvlinkDeployment, httpCall, parseMetrics, registerFleet } from "../helpers/nvlink-fleet.js";
import { freePort, LLMGW, type Proc, ROOT, start, startServe, stop, until } from "../helpers/process.js";

const ADMIN = "monitoring-e2e-admin-token-00000000001";
const RULES = join(ROOT, "docs", "prometheus", "alerts.yml");
const RULE_TESTS = join(ROOT, "docs", "prometheus", "alerts.test.yml");
const DASHBOARD = join(ROOT, "docs", "grafana", "llmgw.json");

const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" });
const havePromtool = !promtool.error && promtool.status === 0;
// CI installs prometheus (.ci/run): there a missing promtool is a failure, not a skip.
const skipPromtool = !havePromtool && !process.env.CI;
if (skipPromtool) {
  console.warn(
    "monitoring.test.ts: promtool is not installed, so the alert rules are not checked; `apt-get install -y prometheus` brings it",
  );
}
const runPromtool = (args: string[]) => {
  const r = spawnSync("promtool", args, { encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
};

type Target = { expr?: string; datasource?: { type?: string; uid?: string } };
type Panel = { title?: string; type: string; targets?: Target[]; panels?: Panel[]; datasource?: Target["datasource"] };
type Dashboard = {
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown; datasource?: Target["datasource"] }[] };
};

/** Every panel, those inside collapsed rows too. */
const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);

/**
 * The llmgw_ metric names a PromQL expression reads: identifiers outside quoted strings (label values), whether
 * followed by `{`, `[` or standing alone. Label names and functions never start with llmgw_.
 */
function metricNamesOf(expr: string): string[] {
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  return [...new Set([...bare.matchAll(/(?<![A-Za-z0-9_:])llmgw_[A-Za-z0-9_:]*/g)].map((m) => m[0]))];
}

/** Each panel's and variable's PromQL, labelled with where it is. */
function dashboardQueries(d: Dashboard): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  for (const p of allPanels(d.panels))
    for (const [i, t] of (p.targets ?? []).entries()) if (t.expr) out.push({ where: `${p.title} #${i}`, expr: t.expr });
  for (const v of d.templating.list) {
    const q = typeof v.query === "string" ? v.query : (v.query as { query?: string } | undefined)?.query;
    if (v.type === "query" && q) out.push({ where: `variable ${v.name}`, expr: q });
  }
  return out;
}

/**
 * The metric names `queries` read that `exposition` does not serve with at least one sample: a histogram's
 * `_bucket`, `_sum` and `_count` count as its family's.
 */
function missingMetrics(queries: { where: string; expr: string }[], exposition: string): string[] {
  const types = new Map([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  const sampled = new Set(parseMetrics(exposition).map((s) => s.name));
  const familyOf = (name: string) => {
    const base = name.replace(/_(bucket|sum|count)$/, "");
    return base !== name && (types.get(base) === "histogram" || types.get(base) === "summary") ? base : name;
  };
  const missing: string[] = [];
  for (const q of queries)
    for (const name of metricNamesOf(q.expr)) {
      if (!types.has(familyOf(name)) || !sampled.has(name)) missing.push(`${name} (${q.where})`);
    }
  return missing;
}

/** Every alert rule's expression. */
function ruleQueries(): { where: string; expr: string }[] {
  const doc = parseYaml(readFileSync(RULES, "utf8")) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}

// Grafana's own syntax for a variable, not a template literal
const DATASOURCE = { type: "prometheus", uid: ["$", "{datasource}"].join("") };
const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as Dashboard;
const tmp = tempDir();
let server: Awaited<ReturnType<typeof startServe>>;
let engine: Proc | undefined;
let exposition = "";
const call: Call = httpCall(() => server.url);

beforeAll(async () => {
  server = await startServe(["--db", join(tmp.dir, "db.sqlite")], { env: { LLMGW_ADMIN_TOKEN: ADMIN } });
  const first = await freePort();
  const tokens = await registerFleet(call, ADMIN, { mgmtAddr: "127.0.0.1", portRange: { first, last: first + 20 } });
  await declareNvlinkDeployment(call, ADMIN);
  let replica: { endpoint: string; shards: { shardId: string; nodeId: string; fabric: string }[] } | undefined;
  await until(
    async () =>
      (replica = (await call("GET", "/api/v1/replicas", { token: ADMIN })).json.items[0])?.shards.length === 2,
    10_000,
    "the replica placed",
  );
  // rank 0's engine: the mock engine on the port placement gave it
  engine = start(process.execPath, [
    LLMGW,
    "mock-engine",
    "--port",
    new URL(replica!.endpoint).port,
    "--model",
    "big",
    "--host",
    "127.0.0.1",
  ]);
  await engine.waitFor(/listening on/);
  for (const s of replica!.shards)
    await call("POST", `/api/v1/agents/${s.nodeId}/status`, {
      token: tokens[s.nodeId],
      // what the agent reports of an NVLink shard whose NCCL used MNNVL (llmgw_shard_transport_ok gets samples)
      body: {
        shards: [
          { shardId: s.shardId, state: "ready", transport: { verdict: "ok", expected: s.fabric, via: "MNNVL" } },
        ],
      },
    });
  const key = (await call("PUT", "/api/v1/api-keys/dashboards", { token: ADMIN, body: { spec: {} } })).json
    .secret as string;
  const chat = { model: "big", messages: [{ role: "user", content: "hello there" }], max_tokens: 3 };
  await until(
    async () => (await call("POST", "/v1/chat/completions", { token: key, body: chat })).status === 200,
    10_000,
    "a routed request answered",
  );
  // the engine gone, the next request fails upstream (connection refused): the error families get samples
  await stop(engine);
  await until(
    async () => (await call("POST", "/v1/chat/completions", { token: key, body: chat })).status === 502,
    10_000,
    "a routed request that fails upstream",
  );
  exposition = await (await fetch(`${server.url}/metrics`)).text();
});
afterAll(async () => {
  if (engine) await stop(engine);
  await stop(server);
  tmp.cleanup();
});

describe("docs/prometheus/alerts.yml", () => {
  it.skipIf(skipPromtool)("passes `promtool check rules`", () => {
    expect(havePromtool, "promtool is not installed (apt-get install -y prometheus)").toBe(true);
    const r = runPromtool(["check", "rules", RULES]);
    expect(r.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.status, r.output).toBe(0);
  });

  it.skipIf(skipPromtool)("passes its unit tests: `promtool test rules docs/prometheus/alerts.test.yml`", () => {
    expect(havePromtool, "promtool is not installed (apt-get install -y prometheus)").toBe(true);
    const r = runPromtool(["test", "rules", RULE_TESTS]);
    expect(r.output).toContain("SUCCESS");
    expect(r.status, r.output).toBe(0);
  });

  it("has a test for every alert", () => {
    const tests = parseYaml(readFileSync(RULE_TESTS, "utf8")) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = tests.tests.flatMap((t) => t.alert_rule_test);
    for (const { where } of ruleQueries()) {
      const name = where.replace(/^alert /, "");
      const mine = cases.filter((c) => c.alertname === name);
      expect(
        mine.some((c) => c.exp_alerts.length > 0),
        `${name} fires in a test`,
      ).toBe(true);
      expect(
        mine.some((c) => c.exp_alerts.length === 0),
        `${name} does not fire in a test`,
      ).toBe(true);
    }
  });

  it("names only metrics a live /metrics serves", () => {
    expect(missingMetrics(ruleQueries(), exposition)).toEqual([]);
  });
});

describe("docs/grafana/llmgw.json", () => {
  it("is a schemaVersion 39 dashboard whose every query goes to its Prometheus datasource variable", () => {
    expect(dashboard.schemaVersion).toBe(39);
    const ds = dashboard.templating.list.find((v) => v.name === "datasource");
    expect(ds).toMatchObject({ type: "datasource", query: "prometheus" });
    const queried = allPanels(dashboard.panels).filter((p) => p.type !== "row");
    expect(queried.length).toBeGreaterThan(10);
    for (const p of queried) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) expect(t.datasource, p.title).toEqual(DATASOURCE);
    }
    for (const v of dashboard.templating.list.filter((x) => x.type === "query"))
      expect(v.datasource, v.name).toEqual(DATASOURCE);
  });

  it("shows the fleet, the fabric, the router and the database", () => {
    const used = new Set(dashboardQueries(dashboard).flatMap((q) => metricNamesOf(q.expr)));
    for (const name of [
      "llmgw_nodes",
      "llmgw_devices",
      "llmgw_replicas",
      "llmgw_pending_replicas",
      "llmgw_model_ready_replicas",
      "llmgw_nvlink_tray_eligible",
      "llmgw_gpu_nvlink_joined",
      "llmgw_imex_up",
      "llmgw_router_requests_total",
      "llmgw_router_request_duration_seconds_bucket",
      "llmgw_router_time_to_first_byte_seconds_bucket",
      "llmgw_router_tokens_total",
      "llmgw_database_up",
    ])
      expect(used.has(name), name).toBe(true);
  });

  it("names only metrics a live /metrics serves, each with samples", () => {
    expect(missingMetrics(dashboardQueries(dashboard), exposition)).toEqual([]);
  });

  it("would be caught naming a metric that does not exist", () => {
    const wrong = structuredClone(dashboard);
    wrong.panels.push({
      type: "timeseries",
      title: "wrong",
      targets: [
        { expr: 'sum(rate(llmgw_router_requests{code="llmgw_nodes"}[5m])) + llmgw_nodes_bucket + llmgw_nodes' },
      ],
    });
    expect(missingMetrics(dashboardQueries(wrong), exposition)).toEqual([
      "llmgw_router_requests (wrong #0)",
      "llmgw_nodes_bucket (wrong #0)",
    ]);
  });

  it.skipIf(skipPromtool)("has only queries promtool parses", () => {
    expect(havePromtool, "promtool is not installed (apt-get install -y prometheus)").toBe(true);
    // each query as a recording rule, Grafana's variables filled in as Grafana would
    const rules = dashboardQueries(dashboard)
      .filter((q) => !q.where.startsWith("variable "))
      .map((q, i) => ({
        record: `dashboard:query_${i}`,
        expr: q.expr.replaceAll("$__rate_interval", "5m").replaceAll("$job", ".+"),
      }));
    const file = join(tmp.dir, "dashboard-queries.yml");
    writeFileSync(file, JSON.stringify({ groups: [{ name: "dashboard", rules }] }));
    const r = runPromtool(["check", "rules", file]);
    expect(r.status, r.output).toBe(0);
  });
});

describe("the live /metrics the checks read", () => {
  it("counts the answered request's tokens and the failed one's upstream error", () => {
    const samples = parseMetrics(exposition);
    const value = (name: string, labels: Record<string, string>) =>
      samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(value("llmgw_router_tokens_total", { model: "big", kind: "completion" })).toBeGreaterThan(0);
    expect(value("llmgw_router_upstream_errors_total", { model: "big" })).toBeGreaterThan(0);
    expect(value("llmgw_model_ready_replicas", { model: "big" })).toBe(1);
    expect(value("llmgw_database_up", {})).toBe(1);
  });
});
