// What the fleet holds and what more it could take (GET /api/v1/plan). Pure, on the same input as plan().
import { plan } from "./plan.js";
import type { PlanInput } from "./types.js";

export type ClassCapacity = {
  class: string;
  total: number;
  free: number;
  used: number;
  unavailable: { count: number; reason: string }[];
};
export type ProfileCapacity = {
  model: string;
  profile: string;
  gpuClass: string;
  pool: string;
  fits: number;
  nodes: Record<string, number>;
  reason?: string;
};

const PROBE = "__capacity_probe__";
/** Enough to fill any fleet: the probe places replicas until one does not fit. */
const AS_MANY_AS_FIT = 100_000;

/** Devices by class: total, free, used by shards, and unavailable with why (node state or the device's problem). */
export function classCapacity(input: PlanInput): ClassCapacity[] {
  const held = new Set(
    input.replicas.flatMap((r) => r.shards.flatMap((s) => s.deviceIds.map((d) => `${s.nodeId}/${d}`))),
  );
  const by = new Map<string, ClassCapacity>();
  for (const n of input.nodes) {
    for (const d of n.devices) {
      const c = by.get(d.class) ?? { class: d.class, total: 0, free: 0, used: 0, unavailable: [] };
      by.set(d.class, c);
      c.total++;
      const why = !n.schedulable ? `node ${n.notSchedulable ?? "not schedulable"}` : d.problems[0];
      if (held.has(`${n.id}/${d.id}`)) c.used++;
      else if (why) {
        const u = c.unavailable.find((x) => x.reason === why);
        if (u) u.count++;
        else c.unavailable.push({ count: 1, reason: why });
      } else c.free++;
    }
  }
  return [...by.values()].sort((a, b) => a.class.localeCompare(b.class));
}

/** For every model profile and pool: how many more replicas would fit now, on which nodes, or why none. */
export function profileCapacity(input: PlanInput): ProfileCapacity[] {
  const pools = [...new Set(input.nodes.map((n) => n.pool))].sort();
  const out: ProfileCapacity[] = [];
  for (const m of [...input.models].sort((a, b) => a.name.localeCompare(b.name))) {
    for (const p of m.profiles) {
      for (const pool of pools) {
        const probe = { name: PROBE, model: m.name, replicas: AS_MANY_AS_FIT, pool, profiles: [p.name] };
        const result = plan({ ...input, deployments: [probe] });
        const nodes: Record<string, number> = {};
        for (const r of result.assign) for (const s of r.shards) nodes[s.nodeId] = (nodes[s.nodeId] ?? 0) + 1;
        const reason = result.assign.length ? undefined : result.pending.find((x) => x.deployment === PROBE)?.reason;
        out.push({
          model: m.name,
          profile: p.name,
          gpuClass: p.gpuClass,
          pool,
          fits: result.assign.length,
          nodes,
          ...(reason ? { reason } : {}),
        });
      }
    }
  }
  return out;
}
