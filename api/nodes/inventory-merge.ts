import type { Heartbeat } from "../../shared/schemas/agent.js";
import type { Inventory } from "../../shared/schemas/inventory.js";
import { applyReadings, readingsOf } from "../db/readings.js";

/** The inventory with a heartbeat's dynamic fields applied; GPUs and ports it does not name stay as they were. */
export function applyHeartbeat(inv: Inventory, hb: Heartbeat): Inventory {
  const read = applyReadings(inv, readingsOf(hb));
  const byUuid = new Map((hb.gpus ?? []).map((g) => [g.uuid, g]));
  const gpus = read.gpus.map((gpu) => {
    const h = byUuid.get(gpu.uuid);
    if (!h) return gpu;
    const next = { ...gpu };
    if ("fabric" in h) next.fabric = h.fabric;
    if (h.health) next.health = h.health;
    const problems = h.migProblems;
    if (problems && next.mig) {
      next.mig = {
        ...next.mig,
        instances: next.mig.instances.map((m) => {
          const key = String(m.index);
          if (!(key in problems)) return m;
          const out = { ...m };
          if (problems[key]!.length) out.problems = problems[key];
          else delete out.problems;
          return out;
        }),
      };
    }
    return next;
  });
  const ports = new Map((hb.ports ?? []).map(({ hca, ...p }) => [`${hca}/${p.port}`, p]));
  const hcas = read.hcas.map((h) => ({ ...h, ports: h.ports.map((p) => ports.get(`${h.name}/${p.port}`) ?? p) }));
  return { ...read, gpus, hcas, imex: hb.imex ?? read.imex };
}
