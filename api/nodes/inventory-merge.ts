import type { Heartbeat } from "../../shared/schemas/agent.js";
import type { Inventory } from "../../shared/schemas/inventory.js";

/** The inventory with a heartbeat's dynamic fields applied; GPUs and ports it does not name stay as they were. */
export function applyHeartbeat(inv: Inventory, hb: Heartbeat): Inventory {
  const byUuid = new Map((hb.gpus ?? []).map((g) => [g.uuid, g]));
  const gpus = inv.gpus.map((gpu) => {
    const h = byUuid.get(gpu.uuid);
    if (!h) return gpu;
    const next = { ...gpu };
    if (h.memoryUsedMiB !== undefined) next.memoryUsedMiB = h.memoryUsedMiB;
    if (h.utilizationPercent !== undefined) next.utilizationPercent = h.utilizationPercent;
    if ("fabric" in h) next.fabric = h.fabric;
    if (h.health) next.health = h.health;
    if ((h.migMemoryUsedMiB || h.migProblems) && next.mig) {
      const used = h.migMemoryUsedMiB ?? {};
      const problems = h.migProblems;
      next.mig = {
        ...next.mig,
        instances: next.mig.instances.map((m) => {
          const key = String(m.index);
          const out = used[key] === undefined ? { ...m } : { ...m, memoryUsedMiB: used[key] };
          if (problems && key in problems) {
            if (problems[key]!.length) out.problems = problems[key];
            else delete out.problems;
          }
          return out;
        }),
      };
    }
    return next;
  });
  const ports = new Map((hb.ports ?? []).map(({ hca, ...p }) => [`${hca}/${p.port}`, p]));
  const hcas = inv.hcas.map((h) => ({ ...h, ports: h.ports.map((p) => ports.get(`${h.name}/${p.port}`) ?? p) }));
  const memory =
    hb.memoryAvailableMiB === undefined ? inv.memory : { ...inv.memory, availableMiB: hb.memoryAvailableMiB };
  return { ...inv, gpus, hcas, memory, imex: hb.imex ?? inv.imex };
}
