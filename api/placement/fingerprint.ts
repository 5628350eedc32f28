// The profile fingerprint: a stable hash of everything that changes an engine's command line (docs/architecture.md,
// placement rule 6).
import { canonicalJson } from "../../shared/canonical-json.js";
import { fnv1a64 } from "../../shared/hash.js";
import type { PlaceModel, PlaceProfile } from "./types.js";

/** Fingerprint of a profile of a model: changes exactly when the engine's command line would. */
export function profileFingerprint(model: PlaceModel, profile: PlaceProfile): string {
  return fnv1a64(
    canonicalJson({
      engine: profile.engine,
      tp: profile.tp,
      pp: profile.pp,
      gpusPerNode: profile.gpusPerNode,
      nodes: profile.nodes,
      args: profile.args,
      env: profile.env,
      gpuClass: profile.gpuClass,
      weightsPath: model.weightsPath,
      servedName: model.servedName,
    }),
  );
}
