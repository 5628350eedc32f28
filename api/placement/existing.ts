// Which existing replicas of a deployment stay, and which go (scale-down, unknown or changed profile).

import { compareText } from "../../shared/sort.js";
import { profileFingerprint } from "./fingerprint.js";
import type { PlaceDeployment, PlaceModel, PlaceProfile, Replica } from "./types.js";

/**
 * The profiles a deployment may use, in its order of preference: its list (unknown names skipped), or all the model's.
 */
export function allowedProfiles(d: PlaceDeployment, model: PlaceModel | undefined): PlaceProfile[] {
  if (!model) return [];
  if (!d.profiles) return [...model.profiles];
  return d.profiles.map((name) => model.profiles.find((p) => p.name === name)).filter((p): p is PlaceProfile => !!p);
}

/** Oldest first: by seq, then id. */
export function bySeq(a: Replica, b: Replica): number {
  return a.seq - b.seq || compareText(a.id, b.id);
}

/**
 * The `n` of `sorted` (oldest first) that go first when there are too many: not ready before ready, newest first
 * within each.
 */
function surplusOf(sorted: readonly Replica[], n: number): Set<Replica> {
  const out = new Set<Replica>();
  for (const ready of [false, true])
    for (let i = sorted.length - 1; i >= 0 && out.size < n; i--) if (!!sorted[i]!.ready === ready) out.add(sorted[i]!);
  return out;
}

export type KeepOrRelease = {
  keep: Replica[];
  release: Replica[];
  /** Kept replicas of a changed fingerprint, oldest first: drained one by one as their replacements become ready. */
  stale: Replica[];
  /** 1 when one replacement may be placed beyond `want` (a rolling replacement, new before old). */
  surge: number;
  /** Old replicas released now because replacements became ready. */
  drained: number;
};

/**
 * Splits a deployment's existing replicas into those kept and those released. A replica whose profile is no longer
 * allowed or known goes at once. A changed fingerprint — or a shard on a draining node (`leaving`) — replaces
 * replicas one at a time: one new replica is placed beyond the desired count, and one old one is released each time a
 * new one is ready. Past `want`, not-ready
 * replicas go before ready ones, newest first.
 */
export function keepOrRelease(
  replicas: readonly Replica[],
  model: PlaceModel | undefined,
  allowed: readonly PlaceProfile[],
  want: number,
  leaving: (r: Replica) => boolean = () => false,
): KeepOrRelease {
  const current = new Map(model ? allowed.map((p) => [p.name, profileFingerprint(model, p)]) : []);
  // in one pass (a plain loop: at fleet size a deployment has thousands of replicas, and this runs every placement)
  const fresh: Replica[] = [];
  const stale: Replica[] = [];
  const gone: Replica[] = [];
  for (const r of [...replicas].sort(bySeq)) {
    const fingerprint = current.get(r.profile);
    if (fingerprint === undefined) gone.push(r);
    else if (fingerprint === r.fingerprint && !leaving(r)) fresh.push(r);
    else stale.push(r);
  }
  if (fresh.length >= want) {
    const surplus = surplusOf(fresh, fresh.length - want);
    const keep: Replica[] = [];
    for (const r of fresh) if (!surplus.has(r)) keep.push(r);
    return { keep, release: [...gone, ...stale, ...surplus], stale: [], surge: 0, drained: stale.length };
  }
  const readyFresh = fresh.filter((r) => r.ready).length;
  const kept = stale.slice(stale.length - Math.min(stale.length, Math.max(0, want - readyFresh)));
  const inFlight = fresh.some((r) => !r.ready);
  const surge = kept.length > 0 && !inFlight ? 1 : 0;
  return {
    keep: [...fresh, ...kept],
    release: [...gone, ...stale.filter((r) => !kept.includes(r))],
    stale: kept,
    surge,
    drained: stale.length - kept.length,
  };
}
