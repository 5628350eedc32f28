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

/** Which of `replicas` go first when there are too many: not ready before ready, newest first within each. */
function scaleDownOrder(replicas: readonly Replica[]): Replica[] {
  const newest = [...replicas].sort(bySeq).reverse();
  return [...newest.filter((r) => !r.ready), ...newest.filter((r) => r.ready)];
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
  const sorted = [...replicas].sort(bySeq);
  const fresh = sorted.filter((r) => current.get(r.profile) === r.fingerprint && !leaving(r));
  const stale = sorted.filter(
    (r) => current.has(r.profile) && (current.get(r.profile) !== r.fingerprint || leaving(r)),
  );
  const gone = sorted.filter((r) => !current.has(r.profile));
  if (fresh.length >= want) {
    const surplus = new Set(scaleDownOrder(fresh).slice(0, fresh.length - want));
    return {
      keep: fresh.filter((r) => !surplus.has(r)),
      release: [...gone, ...stale, ...surplus],
      stale: [],
      surge: 0,
      drained: stale.length,
    };
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
