// What the agent tells the control plane between registrations, and when it must register again instead: pure
// functions over two discoveries of the same node.
import type { Heartbeat, ShardReport } from "../shared/schemas/agent.js";
import type { StartShard } from "../shared/schemas/assignment.js";
import type { Inventory } from "../shared/schemas/inventory.js";

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

/**
 * The part of an inventory a heartbeat cannot carry (GPUs and their MIG layout, HCAs, engines, weights, host): when
 * it changes, the agent registers again.
 */
export function registrationKey(inv: Inventory): string {
  return JSON.stringify({
    host: inv.host,
    memory: inv.memory.totalMiB,
    storage: inv.storage.map((s) => [s.path, s.totalBytes, s.shared]),
    weights: inv.weights.map((w) => w.path),
    engines: inv.engines,
    gpus: inv.gpus.map((g) => ({
      ...g,
      memoryUsedMiB: 0,
      utilizationPercent: 0,
      fabric: 0,
      health: 0,
      mig: g.mig && {
        ...g.mig,
        instances: g.mig.instances.map((m) => ({ ...m, memoryUsedMiB: 0, processes: 0, problems: 0 })),
      },
    })),
    hcas: inv.hcas.map((h) => ({ ...h, ports: h.ports.map((p) => p.port) })),
    fabrics: inv.fabrics,
    errors: inv.errors.map((e) => e.source),
  });
}

/** What placement reads from the dynamic facts (fabric, IMEX, GPU problems, port states): a change is sent at once. */
export function fabricKey(inv: Inventory): string {
  return JSON.stringify({
    gpus: inv.gpus.map((g) => [
      g.uuid,
      g.fabric ?? null,
      g.health.problems,
      g.mig?.instances.filter((m) => m.problems?.length).map((m) => [m.index, m.problems]) ?? null,
    ]),
    imex: [inv.imex.state, inv.imex.channels, inv.imex.domainState ?? null],
    ports: inv.hcas.map((h) => [h.name, h.ports.map((p) => p.state)]),
  });
}

/** Why this node cannot run a shard's devices now (a card or MIG instance gone), or undefined when it can. */
export function missingDevices(shard: StartShard, inv: Inventory): string | undefined {
  if (shard.visibleDevices.startsWith("MIG-")) {
    const found = inv.gpus.some((g) =>
      g.mig?.instances.some((m) => m.uuid === shard.visibleDevices || `MIG-${m.uuid}` === shard.visibleDevices),
    );
    return found ? undefined : `MIG instance ${shard.visibleDevices} is not present on this node`;
  }
  const have = new Set(inv.gpus.map((g) => g.index));
  const cards = shard.visibleDevices.split(",").filter(Boolean).map(Number);
  const gone = cards.filter((c) => !have.has(c));
  return gone.length
    ? `GPU ${gone.join(", ")} ${gone.length === 1 ? "is" : "are"} not present on this node`
    : undefined;
}
