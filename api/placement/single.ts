// Single-node replicas (docs/architecture.md, placement rule 2): `gpusPerNode` devices on one node, or one MIG
// instance.
import { leaderPorts, talksToPeers } from "../../shared/engines.js";
import { compareText } from "../../shared/sort.js";
import type { Attempt, PlaceContext } from "./context.js";
import type { DeviceSet } from "./devices.js";
import { fitGetter, fits, type NodeFit } from "./fit.js";
import { MinHeap } from "./heap.js";
import { changedSince, type Ledger, versionOf } from "./ledger.js";
import { singleReason } from "./reasons.js";
import { buildReplica } from "./replica.js";
import type { Scope } from "./scope.js";
import type { PlaceNode } from "./types.js";

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
  const fitOf = fitGetter(ctx.fits, profile.gpuClass, k, ctx.ledger, network, ports);
  const best = bestOf(ctx, scope, fitOf, `${profile.gpuClass}/${k}/${network}/${ports?.offsets.join(",") ?? ""}`);
  if (!best) return { reason: singleReason(profile.gpuClass, k, scope, scope.schedulable.map(fitOf)) };
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

/**
 * A fitting node's rank, lowest best: NICs for a replica that talks to peers, NVLink-peer set, one-NUMA set, the
 * tightest fit, weights local, fewest shards of the deployment — compared in that order (each part packed in bits
 * above the next; the node order of the scope breaks what is still equal).
 */
function singleScore(ctx: PlaceContext, f: NodeFit & { set: DeviceSet }, network: boolean, k: number): number {
  const nics = network && !f.set.nics ? 1 : 0;
  const peers = f.set.peers ? 0 : 1;
  const numa = f.set.numa ? 0 : 1;
  const slack = Math.min(f.free - k, 1023);
  const weights = f.node.weights.includes(ctx.model.weightsPath) ? 0 : 1;
  const spread = Math.min(ctx.spread.get(f.node.id) ?? 0, 2 ** 20 - 1);
  return ((((nics * 2 + peers) * 2 + numa) * 1024 + slack) * 2 + weights) * 2 ** 20 + spread;
}

type Fitting = NodeFit & { set: DeviceSet };
/** The fitting nodes of a scope by rank, kept while one deployment's replicas are placed one after another. */
type Ranking = {
  ledger: Ledger;
  spread: PlaceContext["spread"];
  weightsPath: string;
  /** How far into the ledger's changes the ranking is up to date. */
  seen: number;
  heap: MinHeap<{ fit: Fitting; version: number }>;
};
const rankings = new WeakMap<Scope, Map<string, Ranking>>();

/** Where the node `id` is in `nodes` (sorted by id, as every stage of a scope is), or -1: a binary search. */
function indexOf(nodes: readonly PlaceNode[], id: string): number {
  let lo = 0;
  let hi = nodes.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = compareText(nodes[mid]!.id, id);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * The best fitting node of the scope — the first of the lowest score in the scope's node order, as one pass over
 * every node would find it — from a ranking brought up to date with only the nodes the ledger changed on since.
 */
function bestOf(ctx: PlaceContext, scope: Scope, fitOf: (n: PlaceNode) => NodeFit, key: string) {
  const { profile, ledger } = ctx;
  const network = key.split("/")[2] === "true";
  const k = profile.gpusPerNode;
  let byKey = rankings.get(scope);
  if (!byKey) rankings.set(scope, (byKey = new Map()));
  let r = byKey.get(key);
  const rank = (i: number, node: PlaceNode) => {
    const fit = fitOf(node);
    if (fits(fit, true))
      r!.heap.push({
        rank: singleScore(ctx, fit, network, k),
        order: i,
        item: { fit, version: versionOf(ledger, node.id) },
      });
  };
  if (!r || r.ledger !== ledger || r.spread !== ctx.spread || r.weightsPath !== ctx.model.weightsPath) {
    r = {
      ledger,
      spread: ctx.spread,
      weightsPath: ctx.model.weightsPath,
      seen: changedSince(ledger, 0).next,
      heap: new MinHeap(),
    };
    byKey.set(key, r);
    for (const [i, node] of scope.schedulable.entries()) rank(i, node);
  } else {
    const { nodeIds, next } = changedSince(ledger, r.seen);
    r.seen = next;
    for (const id of new Set(nodeIds)) {
      const i = indexOf(scope.schedulable, id);
      if (i >= 0) rank(i, scope.schedulable[i]!);
    }
  }
  // an entry made before its node changed is stale: the node's current entry (if it still fits) was pushed since
  for (let top = r.heap.peek(); top; top = r.heap.peek()) {
    if (top.item.version === versionOf(ledger, top.item.fit.node.id)) return top.item.fit;
    r.heap.pop();
  }
  return undefined;
}
