// Multi-node replicas (docs/architecture.md, placement rule 3): all shards or none, NVLink domain first, InfiniBand
// fabric second.
import { leaderPorts } from "../../shared/engines.js";
import type { Attempt, PlaceContext } from "./context.js";
import { nodeTiebreak } from "./context.js";
import { cachedFits } from "./fit.js";
import { chooseFabric, ibEnv, nearestHcas } from "./ib.js";
import { chooseDomain, NVLINK_ENV } from "./nvlink.js";
import { multiReason } from "./reasons.js";
import { buildReplica } from "./replica.js";
import type { Scope } from "./scope.js";

/** Places a replica of `nodes` shards on as many nodes of one NVLink domain, else of one IB fabric; never partly. */
export function placeMulti(ctx: PlaceContext, scope: Scope): Attempt {
  const { profile } = ctx;
  const k = profile.gpusPerNode;
  const n = profile.nodes;
  const ports = leaderPorts(profile.engine, profile.args);
  const all = cachedFits(ctx.fits, scope.schedulable, profile.gpuClass, k, ctx.ledger, false, ports);
  const base = { seq: ctx.seq, deployment: ctx.deployment.name, profile: profile.name, fingerprint: ctx.fingerprint };
  const nv = chooseDomain(all, n, k);
  if (nv) {
    const gang = nv.gang.map((fit) => ({ fit, hcas: [], env: { ...NVLINK_ENV } }));
    return { replica: buildReplica({ ...base, fabric: `nvlink:${nv.domain}` }, gang) };
  }
  const ib = chooseFabric(all, n, (f) => [f.free - k, ...nodeTiebreak(ctx, f.node)]);
  if (ib) {
    const gang = ib.gang.map((fit) => {
      const hcas = nearestHcas(
        fit.node,
        ib.fabric,
        fit.set.devices.map((d) => d.card),
      );
      return { fit, hcas, env: ibEnv(hcas) };
    });
    return { replica: buildReplica({ ...base, fabric: `ib:${ib.fabric}` }, gang) };
  }
  return { reason: multiReason(profile.gpuClass, k, n, scope, all) };
}
