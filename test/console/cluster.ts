// A small fleet for the console's tests, built from real captures: a GB200 NVL domain of four trays (the 4-GPU
// GB200 `nvidia-smi -q -x` and `topo -m` captures, one node per tray) — tray 3 out (GPU 2 fabric In Progress, IMEX
// down), tray 4 degraded (GPU 1 Limited Capacity, bandwidth Degraded), their adapters on no named InfiniBand fabric
// (so a replica spanning trays has only NVLink) — and one 8× H100 HGX node with its topology.
import { composeGpus } from "../../agent/discovery/gpus.js";
import { parseTopo } from "../../agent/discovery/topo.js";
import type { RegisterRequestInput } from "../../shared/schemas/agent.js";
import type { Gpu } from "../../shared/schemas/gpu.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { fixture, GB200_XML, H100_XML, nodeInventory, registerBody } from "../helpers/inventory.js";

const GB200_TOPO = "topo/gb200-4gpu-8nic-legend-full-UNPINNED-REPO.txt";
const H100_TOPO = "topo/hgx-h100-8x-nv18-8nic-legend-spaces-sglang30401.txt";

export const TRAYS = ["gb-tray-1", "gb-tray-2", "gb-tray-3", "gb-tray-4"] as const;
export const OUT_TRAY = "gb-tray-3";
export const DEGRADED_TRAY = "gb-tray-4";
export const HGX_NODE = "hgx-1";

/** GPUs of a capture with the topology of `topo` applied (NVLink peers, NUMA node, nearest adapter). */
function withTopo(inv: Inventory, topo: string): Gpu[] {
  return composeGpus({ cards: inv.gpus, topo: parseTopo(fixture(topo)) });
}

/**
 * One GB200 tray as a node: its own tray index and GPU UUIDs, IMEX ready with a channel; out or degraded on request.
 */
export function gb200Tray(nodeId: string, tray: number, opts: { out?: boolean; degraded?: boolean } = {}): Inventory {
  const inv = nodeInventory(nodeId, GB200_XML);
  const gpus = withTopo(inv, GB200_TOPO).map((g): Gpu => {
    const fabric = g.fabric!;
    const platform = { ...g.platform, trayIndex: tray, slotNumber: 10 + tray };
    if (opts.out && g.index === 2)
      return { ...g, platform, fabric: { ...fabric, state: "In Progress", status: undefined } };
    if (opts.degraded && g.index === 1)
      return {
        ...g,
        platform,
        fabric: { ...fabric, health: { ...fabric.health, summary: "Limited Capacity", bandwidth: "Degraded" } },
      };
    return { ...g, platform };
  });
  const imex = opts.out
    ? { state: "down" as const, channels: 0 }
    : { state: "ready" as const, domainState: "UP", channels: 1 };
  return { ...inv, gpus, imex, fabrics: [] };
}

/** The registration bodies of the whole fleet: four GB200 trays and the HGX node. */
export function fleet(): RegisterRequestInput[] {
  const trays = TRAYS.map((id, i) => ({
    ...registerBody(id, gb200Tray(id, i + 1, { out: id === OUT_TRAY, degraded: id === DEGRADED_TRAY })),
    labels: { pool: "prod", rack: "nvl-a" },
  }));
  const hgx = nodeInventory(HGX_NODE, H100_XML);
  return [...trays, registerBody(HGX_NODE, { ...hgx, gpus: withTopo(hgx, H100_TOPO) })];
}

/** A model that needs two whole trays of one NVLink domain per replica. */
export const NVL_MODEL = {
  weightsPath: "/models/llama-3.1-405b",
  profiles: [{ name: "nvl-2x4", engine: "vllm", gpuClass: "gb200-185g", tp: 8, gpusPerNode: 4, nodes: 2 }],
};
