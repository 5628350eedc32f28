// Single-node replicas (DESIGN §4.2): `gpusPerNode` devices on one node, or one MIG instance.
import type { Attempt, PlaceContext } from "./context.js";
import { nodeTiebreak } from "./context.js";
import { cachedFit, compareScores, fits } from "./fit.js";
import { singleReason } from "./reasons.js";
import { buildReplica } from "./replica.js";
import type { Scope } from "./scope.js";

/**
 * Places a one-node replica on the best schedulable node of the scope: NVLink-peer sets first, then one-NUMA sets,
 * then the tightest fit, weights local, fewest shards of the deployment, node id.
 */
export function placeSingle(ctx: PlaceContext, scope: Scope): Attempt {
  const { profile } = ctx;
  const k = profile.gpusPerNode;
  const all = scope.schedulable.map((node) => cachedFit(ctx.fits, node, profile.gpuClass, k, ctx.ledger));
  const scored = all
    .filter((f) => fits(f, true))
    .map((f) => ({ f, score: [f.set!.peers ? 0 : 1, f.set!.numa ? 0 : 1, f.free - k, ...nodeTiebreak(ctx, f.node)] }));
  const best = scored.sort((a, b) => compareScores(a.score, b.score))[0]?.f;
  if (!best || !fits(best, true)) return { reason: singleReason(profile.gpuClass, k, scope, all) };
  const replica = buildReplica(
    { seq: ctx.seq, deployment: ctx.deployment.name, profile: profile.name, fingerprint: ctx.fingerprint, fabric: "single" },
    [{ fit: best, hcas: [], env: {} }],
  );
  return { replica };
}
