// A crafted fleet for the NVLink view and the cluster metrics, built in code from real captures (copies modified):
// four trays of one GB200 domain (one healthy, one with GPU 2's fabric In Progress, one with GPU 2 degraded, one with
// IMEX down), an HGX H100 board (its NVSwitch reports a zero cluster UUID) and an A100 in MIG mode (no fabric).

import { composeGpus } from "../../agent/discovery/gpus.js";
import { parseSmiList } from "../../agent/discovery/smi-list.js";
import { parseSmiXml } from "../../agent/discovery/smi-xml.js";
import { createApp } from "../../api/app.js";
import { createBackground } from "../../api/background.js";
import { expectedMigrations } from "../../api/db/journal.js";
import type { AppSettings } from "../../api/deps.js";
import { createClusterMetrics } from "../../api/metrics/cluster.js";
import { newPlacementCache } from "../../api/placement/rows.js";
import { createPollHub } from "../../api/poll-hub.js";
import { createRouter } from "../../api/router/index.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { defaultSettings, silentLog, type TestApp } from "./app.js";
import { fixture, GB200_XML, inventoryFromCapture, nodeInventory, registerBody } from "./inventory.js";

/** The domain key of the GB200 capture (its scrubbed cluster UUID, clique 2). */
export const DOMAIN = "00000001-0000-0000-0000-000000000001.2";
export const GB200_CLASS = "gb200-185g";
export const MIG_CLASS = "a100-80g-mig-1g.20gb";
const MIG_XML = "smi-xml/a100-sxm4-80gb-mig-v12-telegraf.xml";
const MIG_L = "smi-L/CRAFTED-a100-80gb-mig-4x1g.20gb-for-telegraf-xml.txt";

/**
 * Tray `tray` of the GB200 domain as node `id`: the real capture with its tray and slot set, IMEX ready with a channel.
 */
function gb200Tray(id: string, tray: number, change: (inv: Inventory) => void = () => {}): Inventory {
  const inv = nodeInventory(id, GB200_XML);
  inv.gpus = inv.gpus.map((g) => ({ ...g, platform: { ...g.platform, trayIndex: tray, slotNumber: 10 + tray } }));
  inv.imex = { state: "ready", domainState: "UP", channels: 1 };
  // the trays reach each other over NVLink only: no InfiniBand fallback for the test's multi-node replicas
  inv.hcas = [];
  inv.fabrics = [];
  change(inv);
  return inv;
}

/** The A100 MIG capture with its instances named from `nvidia-smi -L`, as discovery composes them. */
function migInventory(): Inventory {
  const inv = inventoryFromCapture(MIG_XML);
  inv.gpus = composeGpus({ cards: parseSmiXml(fixture(MIG_XML)).gpus, list: parseSmiList(fixture(MIG_L)) });
  return inv;
}

/** The fleet in registration order (not tray order), each node's inventory and what the view must say of it. */
export function fleet(): { id: string; inventory: Inventory }[] {
  return [
    {
      id: "gb-tray-c",
      inventory: gb200Tray("gb-tray-c", 3, (inv) => {
        const h = inv.gpus[2]!.fabric!.health!;
        inv.gpus[2]!.fabric!.health = { ...h, summary: "Limited Capacity", bandwidth: "Degraded" };
      }),
    },
    { id: "gb-tray-a", inventory: gb200Tray("gb-tray-a", 1) },
    {
      id: "gb-tray-d",
      inventory: gb200Tray("gb-tray-d", 4, (inv) => void (inv.imex = { state: "down", channels: 0 })),
    },
    {
      id: "gb-tray-b",
      inventory: gb200Tray(
        "gb-tray-b",
        2,
        (inv) => void (inv.gpus[2]!.fabric = { ...inv.gpus[2]!.fabric!, state: "In Progress", status: "N/A" }),
      ),
    },
    { id: "hgx-01", inventory: nodeInventory("hgx-01") },
    { id: "mig-01", inventory: migInventory() },
  ];
}

type CallOptions = { token?: string; body?: unknown; headers?: Record<string, string> };
/** Sends one request to the API: through `app.request` in-process, or `fetch` to a real server. */
// biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON field by field
export type Call = (method: string, path: string, c?: CallOptions) => Promise<{ status: number; json?: any }>;

/** Registers the fleet with a join token (`more` goes into every registration); returns each node's token. */
export async function registerFleet(
  call: Call,
  adminToken: string,
  more: Record<string, unknown> = {},
): Promise<Record<string, string>> {
  const j = await call("POST", "/api/v1/join-tokens", { token: adminToken, body: { name: "fleet" } });
  if (j.status !== 201) throw new Error(`join token: ${j.status} ${JSON.stringify(j.json)}`);
  const join = j.json.token as string;
  const tokens: Record<string, string> = {};
  for (const n of fleet()) {
    const r = await call("POST", "/api/v1/agents/register", {
      token: join,
      body: { ...registerBody(n.id, n.inventory), hostname: `${n.id}.lab`, ...more },
    });
    if (r.status !== 201) throw new Error(`register ${n.id}: ${r.status} ${JSON.stringify(r.json)}`);
    tokens[n.id] = r.json.nodeToken;
  }
  return tokens;
}

/** A model whose one profile needs two GB200 trays of one NVLink domain, and a deployment asking for two replicas. */
export async function declareNvlinkDeployment(call: Call, adminToken: string) {
  const profile = { name: "nvl-2x4", engine: "vllm", gpuClass: GB200_CLASS, tp: 8, gpusPerNode: 4, nodes: 2 };
  const m = await call("PUT", "/api/v1/models/big", {
    token: adminToken,
    body: { spec: { weightsPath: "/models/big", profiles: [profile] } },
  });
  const d = await call("PUT", "/api/v1/deployments/big", {
    token: adminToken,
    body: { spec: { model: "big", replicas: 2, pool: "prod" } },
  });
  if (m.status !== 201 || d.status !== 201) throw new Error(`declare: ${m.status} ${d.status}`);
}

/**
 * A second app on the test app's database, wired for /metrics the way `llmgw serve` is (api/node.ts): the router's
 * registry with the cluster gauges and the placement histogram.
 */
export function metricsApp(t: TestApp, settings: Partial<AppSettings> = {}) {
  const routing = createRouter(t.store, { now: t.clock.now, log: silentLog, usageFlushMs: 60_000 });
  const placementCache = newPlacementCache();
  const s = { ...defaultSettings(), ...settings };
  const cluster = createClusterMetrics(routing.registry, {
    db: t.store.db,
    now: t.clock.now,
    lostAfterS: s.nodeLostAfterS,
    log: silentLog,
    placementCache,
  });
  const background = createBackground();
  const app = createApp({
    store: t.store,
    now: t.clock.now,
    log: silentLog,
    settings: s,
    migrations: expectedMigrations,
    waiter: createPollHub(t.store, 50),
    background: background.run,
    placementCache,
    router: routing.router,
    metricsText: () => cluster.text(),
    observePlacement: cluster.observePlacement,
  });
  const call = async (method: string, path: string, c: CallOptions = {}) => {
    const headers: Record<string, string> = { ...c.headers };
    if (c.token) headers.authorization = `Bearer ${c.token}`;
    if (c.body !== undefined) headers["content-type"] = "application/json";
    const res = await app.request(path, {
      method,
      headers,
      body: c.body === undefined ? undefined : JSON.stringify(c.body),
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      text,
      json: /json/.test(res.headers.get("content-type") ?? "") && text ? JSON.parse(text) : undefined,
    };
  };
  return {
    app,
    call,
    settle: () => background.drain(),
    close: async () => {
      await background.drain();
      await routing.close();
    },
  };
}

export type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of a Prometheus text exposition (HELP/TYPE lines skipped; label values unescaped). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, ch: string) => (ch === "n" ? "\n" : ch));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${hits.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return hits[0]?.value;
}

/** A Call over HTTP to the server at `base()` (read at each call: the server starts after the call is made). */
export function httpCall(base: () => string): Call {
  return async (method, path, c = {}) => {
    const headers: Record<string, string> = { ...c.headers };
    if (c.token) headers.authorization = `Bearer ${c.token}`;
    if (c.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${base()}${path}`, {
      method,
      headers,
      body: c.body === undefined ? undefined : JSON.stringify(c.body),
    });
    const text = await res.text();
    return {
      status: res.status,
      json: /json/.test(res.headers.get("content-type") ?? "") && text ? JSON.parse(text) : undefined,
    };
  };
}

/** Scrapes the metrics app's /metrics (expecting 200) into samples. */
export async function scrapeMetrics(m: ReturnType<typeof metricsApp>): Promise<Sample[]> {
  const r = await m.call("GET", "/metrics");
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  return parseMetrics(r.text);
}

/** The samples of one metric name. */
export const series = (samples: Sample[], name: string) => samples.filter((s) => s.name === name);
