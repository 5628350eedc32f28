// The placement core (docs/architecture.md, placement): plan(input) → {assign, release, pending}. Pure and
// deterministic.
import { byText } from "../../shared/sort.js";
import { planDeployment } from "./deployment.js";
import { bySeq } from "./existing.js";
import type { FitCache } from "./fit.js";
import { ledgerOf } from "./ledger.js";
import type { Pending, PlaceModel, PlaceNode, Plan, PlanInput, Replica } from "./types.js";

/**
 * Decides where replicas go: deployments in name order, each keeping its valid replicas, releasing the rest and
 * placing what is missing; replicas of deleted deployments are released. Same input, same plan, whatever the
 * order of nodes, models, deployments or replicas in it. `fits` may carry node fits from an earlier plan over the same
 * node objects (only a cache: the plan is the same without it).
 */
export function plan(input: PlanInput, fits: FitCache = new Map()): Plan {
  const nodes: PlaceNode[] = [...input.nodes].sort(byText((n) => n.id));
  const models = new Map<string, PlaceModel>();
  for (const m of input.models) if (!models.has(m.name)) models.set(m.name, m);
  const deployments = [...input.deployments].sort(byText((d) => d.name));
  const existing = [...input.replicas].sort(bySeq);
  const ledger = ledgerOf(existing);
  const declared = new Set(deployments.map((d) => d.name));
  const release = new Set(existing.filter((r) => !declared.has(r.deployment)).map((r) => r.id));
  const assign: Replica[] = [];
  const pending: Pending[] = [];
  let nextSeq = input.nextSeq;
  let again = false;
  const rolling: string[] = [];
  const seen = new Set<string>();
  // each deployment's replicas, oldest first (one pass, not one per deployment)
  const byDeployment = new Map<string, Replica[]>();
  for (const r of existing) {
    const mine = byDeployment.get(r.deployment);
    if (mine) mine.push(r);
    else byDeployment.set(r.deployment, [r]);
  }
  for (const d of deployments) {
    if (seen.has(d.name)) continue;
    seen.add(d.name);
    const mine = byDeployment.get(d.name) ?? [];
    const out = planDeployment(d, models.get(d.model), mine, nodes, ledger, fits, nextSeq);
    assign.push(...out.assign);
    for (const id of out.release) release.add(id);
    if (out.pending) pending.push(out.pending);
    again ||= !!out.again;
    if (out.rolling) rolling.push(d.name);
    nextSeq = out.nextSeq;
  }
  const order = new Map(existing.map((r, i) => [r.id, i]));
  return {
    assign,
    release: [...release].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0)),
    pending,
    ...(again ? { again } : {}),
    ...(rolling.length ? { rolling } : {}),
  };
}
