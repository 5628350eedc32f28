// Single-node replicas (docs/architecture.md, placement rule 2): `gpusPerNode` devices on one node, or one MIG
// instance.
import { leaderPorts, talksToPeers } from "../../shared/engines.js";
import type { Attempt, PlaceContext } from "./context.js";
import { nodeTiebreak } from "./context.js";
import { cachedFits, compareScores, fits } from "./fit.js";
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
  // a one-node replica that talks to peers (data or expert parallel) wants its GPUs' nearest NICs active and distinct
  const network = talksToPeers(profile.engine, profile.args);
  const ports = leaderPorts(profile.engine, profile.args);
  const all = cachedFits(ctx.fits, scope.schedulable, profile.gpuClass, k, ctx.ledger, network, ports);
  const scored = all
    .filter((f) => fits(f, true))
    .map((f) => ({
      f,
      score: [
        network && !f.set!.nics ? 1 : 0,
        f.set!.peers ? 0 : 1,
        f.set!.numa ? 0 : 1,
        f.free - k,
        ...nodeTiebreak(ctx, f.node),
      ],
    }));
  // one pass for the minimum: sorting every candidate for each replica made large plans quadratic-log
  const best = scored.reduce<(typeof scored)[number] | undefined>(
    (m, x) => (!m || compareScores(x.score, m.score) < 0 ? x : m),
    undefined,
  )?.f;
  if (!best || !fits(best, true)) return { reason: singleReason(profile.gpuClass, k, scope, all) };
  const replica = buildReplica(
    {
      seq: ctx.seq,
      deployment: ctx.deployment.name,
      profile: profile.name,
      fingerprint: ctx.fingerprint,
      fabric: "single",
    },
    [{ fit: best, hcas: [], env: {} }],
  );
  return { replica };
}
