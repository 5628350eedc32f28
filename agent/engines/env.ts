// The environment one shard's engine gets on top of the agent's own: devices, placement's NCCL variables, the
// management interface, the adapter's own variables, and the profile's env last so an operator can override anything.
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { EngineAdapter, EngineOptions } from "./types.js";

/** The device-selection variable: CUDA's, or llama.cpp Vulkan's card indices. */
function deviceEnv(shard: StartShard, adapter: EngineAdapter, o: EngineOptions): Record<string, string> {
  // Only llama.cpp's Vulkan build picks devices by its own variable; everything else is CUDA.
  if (adapter.engine !== "llamacpp" || o.backend !== "vulkan") return { CUDA_VISIBLE_DEVICES: shard.visibleDevices };
  if (shard.visibleDevices.startsWith("MIG-") || shard.deviceIds.some((id) => id >= 1000)) {
    throw new Error(
      `shard ${shard.shardId} is on a MIG instance (${shard.visibleDevices}), but Vulkan cannot address MIG instances: ` +
        "run llama.cpp's CUDA build on MIG, or give this profile whole GPUs",
    );
  }
  return { GGML_VK_VISIBLE_DEVICES: shard.deviceIds.join(",") };
}

/** Every variable the engine of `shard` needs beyond the agent's own environment. Throws when it cannot run here. */
export function shardEnv(shard: StartShard, adapter: EngineAdapter, o: EngineOptions): Record<string, string> {
  const mgmt: Record<string, string> = shard.mgmtInterface
    ? { NCCL_SOCKET_IFNAME: shard.mgmtInterface, GLOO_SOCKET_IFNAME: shard.mgmtInterface }
    : {};
  return {
    ...deviceEnv(shard, adapter, o),
    ...shard.env,
    ...mgmt,
    ...(adapter.env?.(shard, o) ?? {}),
    ...shard.profile.env,
  };
}
