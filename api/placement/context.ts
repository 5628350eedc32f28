// What placing one replica of one profile needs to know, and what it comes back with.
import type { FitCache } from "./fit.js";
import type { Ledger } from "./ledger.js";
import type { PlaceDeployment, PlaceModel, PlaceNode, PlaceProfile, Replica } from "./types.js";

export type PlaceContext = {
  /** Every node, sorted by id. */
  nodes: readonly PlaceNode[];
  deployment: PlaceDeployment;
  model: PlaceModel;
  profile: PlaceProfile;
  fingerprint: string;
  ledger: Ledger;
  /** Node fits already worked out in this plan() call. */
  fits: FitCache;
  /** Shards of this deployment's replicas per node id, to spread replicas when the fit is equal. */
  spread: ReadonlyMap<string, number>;
  /** The seq the replica gets if it is placed. */
  seq: number;
};

/** A placed replica, or why it could not be placed. */
export type Attempt = { replica: Replica } | { reason: string };

/**
 * Preference of a node among equally good ones: weights already on local disk, then fewest shards of the deployment.
 */
export function nodeTiebreak(ctx: PlaceContext, node: PlaceNode): number[] {
  return [node.weights.includes(ctx.model.weightsPath) ? 0 : 1, ctx.spread.get(node.id) ?? 0];
}
