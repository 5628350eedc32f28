// What a shard's engine is asked to print so the agent can tell which transport NCCL chose: INFO from the INIT and
// NET subsystems only (the network and its devices, each channel's transport, MNNVL and NVLS; a few hundred lines at
// start, nothing per request). A profile that sets NCCL_DEBUG itself keeps its own, without these subsystems.
import type { StartShard } from "../../shared/schemas/assignment.js";

/** Shards that use NCCL between GPUs: several nodes, or several GPUs on one. */
export const usesNccl = (s: StartShard): boolean => s.nnodes > 1 || s.deviceIds.length > 1;

export function ncclReportEnv(s: StartShard): Record<string, string> {
  if (!usesNccl(s) || "NCCL_DEBUG" in s.profile.env) return {};
  return { NCCL_DEBUG: "INFO", NCCL_DEBUG_SUBSYS: "INIT,NET" };
}
