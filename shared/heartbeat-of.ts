// The heartbeat an inventory implies: what an agent sends between registrations (agent/heartbeat.ts), and what the
// control plane takes a registration to have said already (the digest its first heartbeat is compared with).
import type { Heartbeat, ShardReport } from "./schemas/agent.js";
import type { Inventory } from "./schemas/inventory.js";

/**
 * The heartbeat of a fresh discovery: the dynamic facts of every GPU and port, IMEX, memory, shard states, and the
 * summary of the IMEX peer list when the node has one.
 */
export function heartbeatOf(
  inv: Inventory,
  shards: ShardReport[] = [],
  imexConfig?: Heartbeat["imexConfig"],
): Heartbeat {
  return {
    ...(inv.memory.availableMiB !== undefined ? { memoryAvailableMiB: inv.memory.availableMiB } : {}),
    gpus: inv.gpus.map((g) => ({
      uuid: g.uuid,
      ...(g.memoryUsedMiB !== undefined ? { memoryUsedMiB: g.memoryUsedMiB } : {}),
      ...(g.utilizationPercent !== undefined ? { utilizationPercent: g.utilizationPercent } : {}),
      ...(g.fabric ? { fabric: g.fabric } : {}),
      health: g.health,
      ...(g.mig
        ? {
            migMemoryUsedMiB: Object.fromEntries(
              g.mig.instances
                .filter((m) => m.memoryUsedMiB !== undefined)
                .map((m) => [String(m.index), m.memoryUsedMiB!]),
            ),
            migProblems: Object.fromEntries(g.mig.instances.map((m) => [String(m.index), m.problems ?? []])),
          }
        : {}),
    })),
    imex: inv.imex,
    ports: inv.hcas.flatMap((h) => h.ports.map((p) => ({ ...p, hca: h.name }))),
    ...(shards.length ? { shards: shards.slice(0, 256) } : {}),
    ...(imexConfig ? { imexConfig } : {}),
  };
}
