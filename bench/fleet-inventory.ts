// The simulated fleet of bench/fleet.ts: node i's id, registration and inventory, built from real `nvidia-smi -q -x`
// captures (test/fixtures) with every GPU UUID, address and NVLink domain made the node's own. Deterministic in i, so
// the benchmark's main process and its agent processes agree on the fleet without passing it around.
import { domainKey } from "../shared/fabric.js";
import type { RegisterRequestInput } from "../shared/schemas/agent.js";
import type { Inventory } from "../shared/schemas/inventory.js";
import { GB200_XML, H100_XML, inventoryFromCapture } from "../test/helpers/inventory.js";

const B200_XML = "smi-xml/hgx-8x-b200-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml";
const L40S_XML = "smi-xml/l40s-1gpu-595.91.07-k8stestinfra.xml";

/** The kinds of node, in twentieths of the fleet: 16 HGX H100, 2 GB200 trays, 1 HGX B200, 1 L40S. */
export const KINDS = [
  { kind: "h100", xml: H100_XML, of20: 16, gpuClass: "h100-80g" },
  { kind: "gb200", xml: GB200_XML, of20: 2, gpuClass: "gb200-185g" },
  { kind: "b200", xml: B200_XML, of20: 1, gpuClass: "b200-179g" },
  { kind: "l40s", xml: L40S_XML, of20: 1, gpuClass: "l40s-45g" },
] as const;
/** GB200 trays per NVLink domain (an NVL72 rack). */
const TRAYS = 18;

const SLOTS = KINDS.flatMap((k, n) => Array.from({ length: k.of20 }, () => n));
const base = new Map<string, Inventory>();
const hex = (n: number, width: number) => n.toString(16).padStart(width, "0").slice(-width);

/** The kind of node i. */
export const kindOf = (i: number) => KINDS[SLOTS[i % SLOTS.length]!]!;

/** How many of the first `n` nodes are of each kind. */
export function fleetMix(n: number): Record<string, number> {
  const mix: Record<string, number> = {};
  for (let i = 0; i < n; i++) mix[kindOf(i).kind] = (mix[kindOf(i).kind] ?? 0) + 1;
  return mix;
}

/** Node i's id. */
export const nodeIdOf = (i: number) => `${kindOf(i).kind}-${String(i).padStart(5, "0")}`;

/** Node i's inventory: its capture's GPUs with UUIDs of its own; a GB200 tray in its rack's NVLink domain. */
export function inventoryOf(i: number): Inventory {
  const k = kindOf(i);
  let inv = base.get(k.kind);
  if (!inv) base.set(k.kind, (inv = inventoryFromCapture(k.xml)));
  // racks of TRAYS trays share a cluster UUID; a capture whose fabric names no cluster (an HGX board's NVSwitch
  // reports the zero UUID) keeps it, so only the trays are in multi-node NVLink domains
  const rack = Math.floor(i / ((SLOTS.length * TRAYS) / k.of20));
  const gpus = inv.gpus.map((g, n) => ({
    ...g,
    uuid: `GPU-${hex(i, 8)}-${hex(n, 4)}-4000-8000-${hex(i * 64 + n, 12)}`,
    ...(g.fabric && domainKey(g.fabric)
      ? { fabric: { ...g.fabric, clusterUuid: `${hex(rack + 1, 8)}-0000-4000-8000-${hex(rack, 12)}` } }
      : {}),
  }));
  return {
    ...inv,
    gpus,
    ...(k.kind === "gb200" ? { imex: { state: "ready" as const, channels: 1 } } : {}),
  };
}

/**
 * `inv` as a fresh discovery finds it at beat `beat`: memory in use, utilization, temperature and power differ at every
 * heartbeat, as a real node's do (the rest stays as registered).
 */
export function withReadings(inv: Inventory, beat: number): Inventory {
  return {
    ...inv,
    gpus: inv.gpus.map((g, n) => {
      const load = (beat * 37 + n * 11) % 100;
      return {
        ...g,
        memoryUsedMiB: Math.round(((g.memoryTotalMiB ?? 0) * load) / 100),
        utilizationPercent: load,
        health: { ...g.health, temperatureC: 30 + (load % 50), powerDrawW: 80 + load * 6 },
      };
    }),
  };
}

/** Node i's registration, as the agent sends it (no engines running yet). */
export function registrationOf(i: number, inventory: Inventory): RegisterRequestInput {
  const id = nodeIdOf(i);
  return {
    nodeId: id,
    hostname: `${id}.fleet.lab`,
    mgmtAddr: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    mgmtInterface: "eth0",
    agentVersion: "0.1.0",
    labels: { pool: "prod", rack: `r${Math.floor(i / 40)}` },
    portRange: { first: 20000, last: 20999 },
    inventory,
    runningShards: [],
  };
}

/** Node i's token when bench/fleet.ts --preseed wrote it to the database (so the agent process can derive it too). */
export const seededToken = (i: number) => `llmgw_node_fleetbench${String(i).padStart(30, "0")}`;
