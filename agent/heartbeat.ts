// When the agent must register again rather than send a heartbeat (the heartbeat itself: shared/heartbeat-of.ts), and
// what it tells the control plane at once: pure functions over two discoveries of the same node.
import type { StartShard } from "../shared/schemas/assignment.js";
import type { Inventory } from "../shared/schemas/inventory.js";

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
