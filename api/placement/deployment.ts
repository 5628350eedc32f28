// Planning one deployment: keep or release what exists, then place the missing replicas one by one.
import type { Attempt, PlaceContext } from "./context.js";
import { allowedProfiles, keepOrRelease } from "./existing.js";
import { profileFingerprint } from "./fingerprint.js";
import type { FitCache } from "./fit.js";
import { hold, type Ledger } from "./ledger.js";
import { placeMulti } from "./multi.js";
import { catalogReason, combineReasons, profileReason, scopeReason } from "./reasons.js";
import { type Scope, scopeOf } from "./scope.js";
import { placeSingle } from "./single.js";
import type { Pending, PlaceDeployment, PlaceModel, PlaceNode, Replica } from "./types.js";

const draining = new WeakMap<readonly PlaceNode[], ReadonlySet<string>>();

/** The draining nodes among `nodes`, found once per plan (one plan's deployments share its array of nodes). */
function drainingIn(nodes: readonly PlaceNode[]): ReadonlySet<string> {
  let out = draining.get(nodes);
  if (!out) draining.set(nodes, (out = new Set(nodes.filter((n) => n.notSchedulable === "draining").map((n) => n.id))));
  return out;
}

export type DeploymentPlan = {
  assign: Replica[];
  release: string[];
  pending?: Pending;
  nextSeq: number;
  again?: boolean;
  /** Replicas are kept until new ones are ready (Plan's `rolling`). */
  rolling?: true;
};

/**
 * Plans one deployment against the ledger, which it updates with every replica it assigns (`fits` caches node fits
 * across the whole plan). Each missing replica takes the first allowed profile that fits; the first replica that
 * fits none leaves it and the rest pending.
 */
export function planDeployment(
  d: PlaceDeployment,
  model: PlaceModel | undefined,
  existing: readonly Replica[],
  nodes: readonly PlaceNode[],
  ledger: Ledger,
  fits: FitCache,
  nextSeq: number,
): DeploymentPlan {
  const want = Number.isInteger(d.replicas) && d.replicas > 0 ? d.replicas : 0;
  const allowed = allowedProfiles(d, model);
  const drains = drainingIn(nodes);
  const leaving = (r: Replica) => r.shards.some((s) => drains.has(s.nodeId));
  const { keep, release, stale, surge, drained } = keepOrRelease(existing, model, allowed, want, leaving);
  const out: DeploymentPlan = {
    assign: [],
    release: release.map((r) => r.id),
    nextSeq,
    ...(stale.length ? { rolling: true as const } : {}),
  };
  const missing = want + surge - keep.length;
  if (missing <= 0) return out;
  const noCatalog = catalogReason(d, model, allowed);
  if (noCatalog || !model) return { ...out, pending: { deployment: d.name, count: missing, reason: noCatalog ?? "" } };
  const spread = new Map<string, number>();
  const count = (r: Replica): void => {
    for (const s of r.shards) spread.set(s.nodeId, (spread.get(s.nodeId) ?? 0) + 1);
  };
  keep.forEach(count);
  const fingerprints = new Map(allowed.map((p) => [p.name, profileFingerprint(model, p)]));
  // A profile's scope (pool, selector, engine, class) does not change while this deployment's replicas are placed.
  const scopes = new Map<string, Scope>();
  for (let i = 0; i < missing; i++) {
    const tries: { profile: string; reason: string }[] = [];
    let placed: Replica | undefined;
    for (const profile of allowed) {
      const ctx: PlaceContext = {
        nodes,
        deployment: d,
        model,
        profile,
        fingerprint: fingerprints.get(profile.name)!,
        ledger,
        fits,
        spread,
        seq: out.nextSeq,
      };
      const attempt = tryProfile(ctx, scopes);
      if ("replica" in attempt) {
        placed = attempt.replica;
        break;
      }
      tries.push({ profile: profile.name, reason: attempt.reason });
    }
    if (!placed && surge && i === missing - 1) {
      // No room for the new replica beside the old ones: the room an old one frees now is used by the next plan;
      // if none was freed, replace in place, the oldest old one first — but never one on a draining node, which
      // could not come back there: it serves on until room appears elsewhere.
      if (drained) return { ...out, again: true };
      if (leaving(stale[0]!)) return out;
      return { ...out, release: [...out.release, stale[0]!.id], again: true };
    }
    if (!placed)
      return { ...out, pending: { deployment: d.name, count: missing - surge - i, reason: combineReasons(tries) } };
    out.assign.push(placed);
    hold(ledger, placed);
    count(placed);
    out.nextSeq++;
  }
  return out;
}

const outOfScopes = new WeakMap<Scope, string | undefined>();

/** One replica of one profile: refused as declared, out of scope, or placed on one node or a gang. */
function tryProfile(ctx: PlaceContext, scopes: Map<string, Scope>): Attempt {
  const refused = profileReason(ctx.profile);
  if (refused) return { reason: refused };
  const scope = scopes.get(ctx.profile.name) ?? scopeOf(ctx.nodes, ctx.deployment, ctx.profile);
  scopes.set(ctx.profile.name, scope);
  // the scope is the same for each replica of the deployment, and so is this (a look at every node in scope)
  if (!outOfScopes.has(scope)) outOfScopes.set(scope, scopeReason(scope, ctx.deployment, ctx.profile));
  const outOfScope = outOfScopes.get(scope);
  if (outOfScope) return { reason: outOfScope };
  const place = (s: Scope) => (ctx.profile.nodes === 1 ? placeSingle(ctx, s) : placeMulti(ctx, s));
  // a replica that just failed on a node goes elsewhere when it can: the fault may be the node's (a bad GPU, a full
  // disk)
  const avoid = new Set(ctx.deployment.avoid);
  if (avoid.size && scope.schedulable.some((n) => avoid.has(n.id))) {
    const elsewhere = place({ ...scope, schedulable: scope.schedulable.filter((n) => !avoid.has(n.id)) });
    if ("replica" in elsewhere) return elsewhere;
  }
  return place(scope);
}
