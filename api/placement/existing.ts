// Which existing replicas of a deployment stay, and which go (scale-down, unknown or changed profile).
import { profileFingerprint } from "./fingerprint.js";
import type { PlaceDeployment, PlaceModel, PlaceProfile, Replica } from "./types.js";

/** The profiles a deployment may use, in its order of preference: its list (unknown names skipped), or all the model's. */
export function allowedProfiles(d: PlaceDeployment, model: PlaceModel | undefined): PlaceProfile[] {
  if (!model) return [];
  if (!d.profiles) return [...model.profiles];
  return d.profiles.map((name) => model.profiles.find((p) => p.name === name)).filter((p): p is PlaceProfile => !!p);
}

/** Oldest first: by seq, then id. */
export function bySeq(a: Replica, b: Replica): number {
  return a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Splits a deployment's existing replicas into those kept and those released: a replica whose profile is no longer
 * allowed or known, or whose fingerprint changed, goes; of the rest, the newest past `want` go.
 */
export function keepOrRelease(
  replicas: readonly Replica[],
  model: PlaceModel | undefined,
  allowed: readonly PlaceProfile[],
  want: number,
): { keep: Replica[]; release: Replica[] } {
  const current = new Map(model ? allowed.map((p) => [p.name, profileFingerprint(model, p)]) : []);
  const sorted = [...replicas].sort(bySeq);
  // A changed fingerprint releases every replica of the old one at once for now; rolling replacement (one at a time,
  // new before old where capacity allows, DESIGN §4.6) is a later step.
  const valid = sorted.filter((r) => current.get(r.profile) === r.fingerprint);
  const invalid = sorted.filter((r) => current.get(r.profile) !== r.fingerprint);
  const keep = valid.slice(0, Math.max(0, want));
  return { keep, release: [...invalid, ...valid.slice(keep.length)] };
}
