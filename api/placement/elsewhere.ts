// Whether a replica would find room away from some of its nodes: repair frees a replica for its transport only when
// it does (on the same nodes it would start the same way again). Pure: a plan of that one deployment without the
// replica, those nodes out of reach.
import { plan } from "./plan.js";
import type { PlanInput, Replica } from "./types.js";

export function fitsElsewhere(input: PlanInput, replica: Replica, away: readonly string[]): boolean {
  const d = input.deployments.find((x) => x.name === replica.deployment);
  if (!d) return false;
  const others = input.replicas.filter((r) => r.id !== replica.id);
  const mine = others.filter((r) => r.deployment === d.name).length;
  const out = plan({
    ...input,
    nodes: input.nodes.map((n) =>
      away.includes(n.id) ? { ...n, schedulable: false, notSchedulable: "its NCCL fell back" } : n,
    ),
    // the others stay where they are (their devices held); only this deployment is planned, one replica short
    replicas: others,
    deployments: [{ ...d, replicas: mine + 1, avoid: undefined }],
  });
  return out.assign.some((r) => r.deployment === d.name);
}
