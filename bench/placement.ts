// Placement figures on a large crafted fleet: 5,000 nodes / ~40,000 GPUs (50 NVL72-like domains, MIG nodes, HGX
// nodes on an IB fabric) with 2,000 replicas declared. Prints placements per second of the pure plan(), and the
// latency of no-op polls and of polls with work through the real app on a file database.
// Run: npx tsx bench/placement.ts
import { createApp } from "../api/app.js";
import { expectedMigrations } from "../api/db/journal.js";
import { ensureAdminToken } from "../api/db/tokens.js";
import { appSettings, ServerConfig } from "../api/config.js";
import { applyMigrations, openDb } from "../api/node.js";
import { plan } from "../api/placement/plan.js";
import type { PlaceDevice, PlaceNode, PlanInput } from "../api/placement/types.js";
import { createPollHub } from "../api/poll-hub.js";
import { tempDbUrl } from "../test/helpers/db.js";
import { machine, median } from "./machine.js";

const DOMAINS = 50;
const TRAYS = 18;
const MIG_NODES = 200;
const HGX_NODES = 5000 - DOMAINS * TRAYS - MIG_NODES;

function devices(cls: string, n: number): PlaceDevice[] {
  return Array.from({ length: n }, (_, i) => ({ id: i, label: String(i), class: cls, card: i, uuid: `GPU-${i}`, problems: [] }));
}
function cards(n: number) {
  const all = Array.from({ length: n }, (_, i) => i);
  return all.map((i) => ({ index: i, numaNode: Math.floor((i * 2) / n), nvlinkPeers: all.filter((j) => j !== i), nics: [`mlx5_${i}`] }));
}
const base = (id: string): PlaceNode => ({
  id, mgmtAddr: `10.${id.length}.0.1`, pool: "prod", labels: {}, schedulable: true, engines: ["vllm", "sglang"], devices: [], cards: [],
  nvlink: { eligible: false, reasons: [], degraded: false }, ibFabrics: [], weights: [], portRange: { first: 20000, last: 20999 },
});

/** The fleet as placement sees it. */
function fleet(): PlaceNode[] {
  const nodes: PlaceNode[] = [];
  for (let d = 0; d < DOMAINS; d++) {
    for (let t = 0; t < TRAYS; t++) {
      nodes.push({ ...base(`nvl${d}-t${t}`), devices: devices("gb200-185g", 4), cards: cards(4), nvlink: { domain: `cluster-${d}.1`, eligible: true, reasons: [], degraded: d % 10 === 9, trayIndex: t } });
    }
  }
  for (let m = 0; m < MIG_NODES; m++) {
    const migs: PlaceDevice[] = Array.from({ length: 8 }, (_, c) => [0, 1].map((i) => ({ id: 1000 + 100 * c + i, label: `${c}/mig${i}`, class: "a100-80g-mig-3g.40gb", card: c, migIndex: i, uuid: `MIG-${m}-${c}-${i}`, problems: [] }))).flat();
    nodes.push({ ...base(`mig${m}`), devices: migs, cards: cards(8) });
  }
  const hcas = Array.from({ length: 8 }, (_, i) => ({ name: `mlx5_${i}`, active: true, numaNode: null }));
  for (let h = 0; h < HGX_NODES; h++) nodes.push({ ...base(`hgx${h}`), devices: devices("h100-80g", 8), cards: cards(8), ibFabrics: [{ name: "ib-east", hcas }] });
  return nodes;
}

const profile = (name: string, gpuClass: string, tp: number, gpusPerNode: number, nodes: number) => ({ name, engine: "vllm", gpuClass, tp, pp: 1, gpusPerNode, nodes, args: [], env: {}, startupTimeoutS: 600 });
const input = (): PlanInput => ({
  nodes: fleet(),
  models: [
    { name: "big", servedName: "big", weightsPath: "/m/big", profiles: [profile("nvl", "gb200-185g", 8, 4, 2), profile("ib", "h100-80g", 16, 8, 2)] },
    { name: "mid", servedName: "mid", weightsPath: "/m/mid", profiles: [profile("tp8", "h100-80g", 8, 8, 1), profile("tp4", "h100-80g", 4, 4, 1)] },
    { name: "small", servedName: "small", weightsPath: "/m/small", profiles: [profile("mig", "a100-80g-mig-3g.40gb", 1, 1, 1)] },
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
console.log(`fleet: 5000 nodes, ${gpuCount} GPUs (${DOMAINS} NVL72-like domains of ${TRAYS} trays, ${MIG_NODES} MIG nodes, ${HGX_NODES} HGX nodes), 2000 replicas declared`);
const runs: number[] = [];
let placed = 0;
for (let r = 0; r < 3; r++) {
  const x = input();
  const t0 = performance.now();
  const p = plan(x);
  runs.push(performance.now() - t0);
  placed = p.assign.length;
}
console.log(`plan() from nothing: ${placed} replicas in ${median(runs).toFixed(0)} ms median of 3 → ${Math.round(placed / (median(runs) / 1000))} placements/s`);
