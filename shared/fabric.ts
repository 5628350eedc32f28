import type { GpuFabric } from "./schemas/gpu.js";

const ZERO_UUID = /^[0-]*$/;

/** A GPU is joined to a multi-node NVLink domain when its fabric finished, succeeded and names a real cluster. */
export function isJoined(f: GpuFabric | undefined): boolean {
  if (!f) return false;
  return f.state === "Completed" && f.status === "Success" && !!f.clusterUuid && !ZERO_UUID.test(f.clusterUuid);
}

/** Domain key `<clusterUuid>.<cliqueId>` of a joined GPU; undefined for a single machine's NVSwitch (zero cluster). */
export function domainKey(f: GpuFabric | undefined): string | undefined {
  if (!f?.clusterUuid || ZERO_UUID.test(f.clusterUuid)) return undefined;
  return `${f.clusterUuid}.${f.cliqueId ?? "0"}`;
}

/** Why a GPU is not joined, in words a person can act on; undefined when it is joined. */
export function notJoinedReason(f: GpuFabric | undefined): string | undefined {
  if (isJoined(f)) return undefined;
  if (!f) return "no NVLink fabric reported";
  if (f.state !== "Completed") return `fabric ${f.state}`;
  if (f.status !== "Success") return `fabric status ${f.status ?? "not reported"}`;
  return "not in a multi-node NVLink domain (cluster UUID is zero)";
}
