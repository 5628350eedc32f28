// Placement figures on a large crafted fleet: 5,000 nodes / ~40,000 GPUs (50 NVL72-like domains, MIG nodes, HGX
// nodes on an IB fabric) with 2,000 replicas declared. Prints placements per second of the pure plan(), and the
// latency of no-op polls and of polls with work through the real app on a file database.
// Run: npx tsx bench/placement.ts
import { createApp } from "../api/app.js";
import { createBackground } from "../api/background.js";
import { appSettings, ServerConfig } from "../api/config.js";
import { expectedMigrations } from "../api/db/journal.js";
import { openDb } from "../api/db/open.js";
import { ensureAdminToken } from "../api/db/tokens.js";
import { applyMigrations } from "../api/node.js";
import { plan } from "../api/placement/plan.js";
import { newPlacementCache } from "../api/placement/rows.js";
import type { PlaceDevice, PlaceNode, PlanInput } from "../api/placement/types.js";
import { createPollHub } from "../api/poll-hub.js";
import { tempDbUrl } from "../test/helpers/db.js";
import { machine, median } from "./machine.js";

const DOMAINS = 50;
const TRAYS = 18;
const MIG_NODES = 200;
const HGX_NODES = 5000 - DOMAINS * TRAYS - MIG_NODES;

function devices(cls: string, n: number): PlaceDevice[] {
  return Array.from({ length: n }, (_, i) => ({
    id: i,
    label: String(i),
    class: cls,
    card: i,
    uuid: `GPU-${i}`,
    problems: [],
  }));
}
function cards(n: number) {
  const all = Array.from({ length: n }, (_, i) => i);
  return all.map((i) => ({
    index: i,
    numaNode: Math.floor((i * 2) / n),
    nvlinkPeers: all.filter((j) => j !== i),
    nics: [`mlx5_${i}`],
  }));
}
const base = (id: string): PlaceNode => ({
  id,
  mgmtAddr: `10.${id.length}.0.1`,
  pool: "prod",
  labels: {},
  schedulable: true,
  engines: ["vllm", "sglang"],
  devices: [],
  cards: [],
  nvlink: { eligible: false, reasons: [], degraded: false },
  ibFabrics: [],
  weights: [],
  portRange: { first: 20000, last: 20999 },
});

/** The fleet as placement sees it. */
function fleet(): PlaceNode[] {
  const nodes: PlaceNode[] = [];
  for (let d = 0; d < DOMAINS; d++) {
    for (let t = 0; t < TRAYS; t++) {
      nodes.push({
        ...base(`nvl${d}-t${t}`),
        devices: devices("gb200-185g", 4),
        cards: cards(4),
        nvlink: { domain: `cluster-${d}.1`, eligible: true, reasons: [], degraded: d % 10 === 9, trayIndex: t },
      });
    }
  }
  for (let m = 0; m < MIG_NODES; m++) {
    const migs: PlaceDevice[] = Array.from({ length: 8 }, (_, c) =>
      [0, 1].map((i) => ({
        id: 1000 + 100 * c + i,
        label: `${c}/mig${i}`,
        class: "a100-80g-mig-3g.40gb",
        card: c,
        migIndex: i,
        uuid: `MIG-${m}-${c}-${i}`,
        problems: [],
      })),
    ).flat();
    nodes.push({ ...base(`mig${m}`), devices: migs, cards: cards(8) });
  }
  const hcas = Array.from({ length: 8 }, (_, i) => ({ name: `mlx5_${i}`, active: true, numaNode: null }));
  for (let h = 0; h < HGX_NODES; h++)
    nodes.push({
      ...base(`hgx${h}`),
      devices: devices("h100-80g", 8),
      cards: cards(8),
      ibFabrics: [{ name: "ib-east", hcas }],
    });
  return nodes;
}

const profile = (name: string, gpuClass: string, tp: number, gpusPerNode: number, nodes: number) => ({
  name,
  engine: "vllm",
  gpuClass,
  tp,
  pp: 1,
  gpusPerNode,
  nodes,
  args: [],
  env: {},
  startupTimeoutS: 600,
});
const input = (): PlanInput => ({
  nodes: fleet(),
  models: [
    {
      name: "big",
      servedName: "big",
      weightsPath: "/m/big",
      profiles: [profile("nvl", "gb200-185g", 8, 4, 2), profile("ib", "h100-80g", 16, 8, 2)],
    },
    {
      name: "mid",
      servedName: "mid",
      weightsPath: "/m/mid",
      profiles: [profile("tp8", "h100-80g", 8, 8, 1), profile("tp4", "h100-80g", 4, 4, 1)],
    },
    {
      name: "small",
      servedName: "small",
      weightsPath: "/m/small",
      profiles: [profile("mig", "a100-80g-mig-3g.40gb", 1, 1, 1)],
    },
  ],
  deployments: [
    { name: "big-nvl", model: "big", replicas: 400, pool: "prod" },
    { name: "mid-hgx", model: "mid", replicas: 1000, pool: "prod" },
    { name: "small-mig", model: "small", replicas: 600, pool: "prod" },
  ],
  replicas: [],
  nextSeq: 1,
});

console.log(`machine: ${machine()}`);
const gpuCount = fleet().reduce((n, x) => n + x.cards.length, 0);
console.log(
  `fleet: 5000 nodes, ${gpuCount} GPUs (${DOMAINS} NVL72-like domains of ${TRAYS} trays, ${MIG_NODES} MIG nodes, ${HGX_NODES} HGX nodes), 2000 replicas declared`,
);
const runs: number[] = [];
let placed = 0;
for (let r = 0; r < 3; r++) {
  const x = input();
  const t0 = performance.now();
  const p = plan(x);
  runs.push(performance.now() - t0);
  placed = p.assign.length;
}
console.log(
  `plan() from nothing: ${placed} replicas in ${median(runs).toFixed(0)} ms median of 3 → ${Math.round(placed / (median(runs) / 1000))} placements/s`,
);

// The same fleet through the real app on a file database: registration rows written directly, then polls.
const { inventoryFromCapture, GB200_XML, H100_XML } = await import("../test/helpers/inventory.js");
const { upsertNode } = await import("../api/db/nodes.js");
const { bumpGeneration } = await import("../api/db/cluster.js");
const tmp = tempDbUrl();
const { client, db, store } = await openDb(tmp.url);
await applyMigrations(db);
const admin = (await ensureAdminToken(store, Date.now()))!;
const background = createBackground();
const app = createApp({
  store,
  now: Date.now,
  log: { info() {}, warn() {}, error() {} },
  settings: appSettings(ServerConfig.parse({})),
  migrations: expectedMigrations,
  waiter: createPollHub(store),
  background: background.run,
  placementCache: newPlacementCache(),
});
const hgx = inventoryFromCapture(H100_XML);
const tray = inventoryFromCapture(GB200_XML);
const register = (id: string, inv: typeof hgx, labels: Record<string, string>) => ({
  nodeId: id,
  hostname: id,
  mgmtAddr: "10.0.0.1",
  agentVersion: "0.1.0",
  labels,
  inventory: { ...inv, gpus: inv.gpus.map((g) => ({ ...g, uuid: `${id}-${g.uuid}` })) },
});
const t0 = performance.now();
for (let chunk = 0; chunk < 5000; chunk += 500) {
  await store.write(async (tx) => {
    for (let i = chunk; i < chunk + 500; i++) {
      const id = i < DOMAINS * TRAYS ? `nvl${Math.floor(i / TRAYS)}-t${i % TRAYS}` : `hgx${i}`;
      const inv =
        i < DOMAINS * TRAYS
          ? {
              ...tray,
              imex: { state: "ready" as const, channels: 1 },
              gpus: tray.gpus.map((g) => ({
                ...g,
                fabric: {
                  ...g.fabric!,
                  clusterUuid: `00000000-0000-0000-0000-${String(Math.floor(i / TRAYS)).padStart(12, "0")}1`,
                  cliqueId: "1",
                },
              })),
            }
          : hgx;
      await upsertNode(tx, register(id, inv, { pool: "prod" }) as never, `hash-${id}`, Date.now());
    }
    await bumpGeneration(tx);
  });
}
console.log(`db: 5000 nodes written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const h = { authorization: `Bearer ${admin}`, "content-type": "application/json" };
await app.request("/api/v1/models/big", {
  method: "PUT",
  headers: h,
  body: JSON.stringify({
    spec: {
      weightsPath: "/m/big",
      profiles: [{ name: "nvl", engine: "vllm", gpuClass: "gb200-185g", tp: 8, gpusPerNode: 4, nodes: 2 }],
    },
  }),
});
await app.request("/api/v1/models/mid", {
  method: "PUT",
  headers: h,
  body: JSON.stringify({
    spec: {
      weightsPath: "/m/mid",
      profiles: [{ name: "tp8", engine: "vllm", gpuClass: "h100-80g", tp: 8, gpusPerNode: 8 }],
    },
  }),
});
await background.drain();
// each write places in the background: time a write until its placement is done
const placing = async (path: string, spec: object) => {
  const s = performance.now();
  await app.request(path, { method: "PUT", headers: h, body: JSON.stringify({ spec }) });
  await background.drain();
  return performance.now() - s;
};
const fromNothing =
  (await placing("/api/v1/deployments/big-nvl", { model: "big", replicas: 400, pool: "prod" })) +
  (await placing("/api/v1/deployments/mid-hgx", { model: "mid", replicas: 1600, pool: "prod" }));
// node tokens are hashes written directly above; poll as a node by minting its token through an admin reset
const reg = await app.request("/api/v1/agents/register", {
  method: "POST",
  headers: h,
  body: JSON.stringify(register("hgx4999", hgx, { pool: "prod" })),
});
const nodeToken = ((await reg.json()) as { nodeToken: string }).nodeToken;
const pollOnce = async () => {
  const s = performance.now();
  const r = await app.request("/api/v1/agents/hgx4999/assignments", {
    headers: { authorization: `Bearer ${nodeToken}` },
  });
  await r.arrayBuffer();
  return performance.now() - s;
};
await pollOnce();
const noop: number[] = [];
for (let i = 0; i < 300; i++) noop.push(await pollOnce());
noop.sort((a, b) => a - b);
const pct = (p: number) => noop[Math.min(noop.length - 1, Math.floor((p / 100) * noop.length))]!;
const work: number[] = [];
for (let i = 0; i < 5; i++)
  work.push(
    await placing("/api/v1/deployments/mid-hgx", { model: "mid", replicas: i % 2 ? 1600 : 1610, pool: "prod" }),
  );
// a write that leaves replicas pending: 100 more two-tray NVLink replicas where room is left for 50
const pendingStart = performance.now();
await app.request("/api/v1/deployments/big-more", {
  method: "PUT",
  headers: h,
  body: JSON.stringify({ spec: { model: "big", replicas: 100, pool: "prod" } }),
});
let pendingReason = "";
while (!pendingReason) {
  await background.drain();
  const d = (await (await app.request("/api/v1/deployments/big-more", { headers: h })).json()) as {
    status: { pending?: { count: number; reason: string }[] };
  };
  pendingReason = d.status.pending?.map((x) => `${x.count} × ${x.reason}`).join("; ") ?? "";
}
const pendingMs = performance.now() - pendingStart;
console.log(
  `placing 2,000 replicas from nothing (two deployment writes, each placed in one transaction): ${fromNothing.toFixed(0)} ms → ${Math.round(2000 / (fromNothing / 1000))} placements/s`,
);
console.log(
  `no-op poll (nothing changed): p50 ${pct(50).toFixed(2)} ms, p99 ${pct(99).toFixed(2)} ms over ${noop.length}`,
);
console.log(
  `a deployment scaled by 10, until placed (placement with work): max ${Math.max(...work).toFixed(0)} ms over ${work.length} (up and down in turn: ${work.map((w) => w.toFixed(0)).join(", ")} ms)`,
);
console.log(
  `a write that leaves replicas pending, until its reason is stored: ${pendingMs.toFixed(0)} ms (${pendingReason})`,
);
console.log(
  `placement: plan_per_s=${Math.round(placed / (median(runs) / 1000))} e2e_per_s=${Math.round(2000 / (fromNothing / 1000))} scale10_max_ms=${Math.max(...work).toFixed(0)} noop_p99_ms=${pct(99).toFixed(2)}`,
);
client.close();
tmp.cleanup();
