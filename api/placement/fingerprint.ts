// The profile fingerprint: a stable hash of everything that changes an engine's command line (docs/architecture.md, placement rule 6).
import { canonicalJson } from "../../shared/canonical-json.js";
import type { PlaceModel, PlaceProfile } from "./types.js";

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

/** FNV-1a 64-bit of a string's UTF-8 bytes, as 16 hex digits. */
export function fnv1a64(text: string): string {
  let h = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(text)) h = ((h ^ BigInt(byte)) * FNV_PRIME) & MASK;
  return h.toString(16).padStart(16, "0");
}

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
