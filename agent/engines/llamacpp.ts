// llama.cpp's llama-server. Flags follow llama.cpp's tools/server/README.md (-m, --host, --port, -ngl, -a/--alias;
// GET /health: 503 "Loading model" while loading, 200 when ready). The Vulkan build picks its cards by
// GGML_VK_VISIBLE_DEVICES: indices into the Vulkan loader's device list, which need not follow nvidia-smi's (llvmpipe
// or another vendor's card may come first, and the loader orders drivers its own way), so placed cards are found there
// by UUID. It cannot address MIG instances.
import { ENGINE_CAPABILITIES } from "../../shared/engines.js";
import { program, prometheusSum, readHealth, withFlag } from "./common.js";
import type { EngineAdapter, EngineOptions } from "./types.js";

/** A UUID as Vulkan prints it (`91c0b9f4-…`) or NVML/nvidia-smi does (`GPU-91c0b9f4-…`), made comparable. */
const sameUuid = (u: string) => u.toLowerCase().replace(/^gpu-/, "");

/**
 * Each placed card's index in the Vulkan loader's list, found by UUID (NVIDIA's Vulkan deviceUUID is the NVML GPU
 * UUID), in the placed cards' order: llama.cpp numbers its devices in the order of GGML_VK_VISIBLE_DEVICES and the
 * first is its main device, as the first card of CUDA_VISIBLE_DEVICES is for the CUDA build.
 */
function vulkanIndices(
  shard: { shardId: string; deviceIds: number[] },
  listed: NonNullable<EngineOptions["vulkanDevices"]>,
  cardUuids: Record<number, string>,
): number[] {
  return shard.deviceIds.map((card) => {
    const uuid = cardUuids[card];
    if (!uuid) {
      throw new Error(
        `shard ${shard.shardId}: the UUID of card ${card} is not known (not in this node's inventory), so its Vulkan ` +
          "device cannot be found: let the agent read its GPUs first, or run llama.cpp's CUDA build",
      );
    }
    const at = listed.findIndex((d) => d.uuid !== undefined && sameUuid(d.uuid) === sameUuid(uuid));
    if (at >= 0) return at;
    const names = listed.length
      ? listed.map((d, i) => `${i}: ${d.name}${d.uuid ? ` (${d.uuid})` : " (no UUID)"}`).join(", ")
      : "no devices";
    throw new Error(
      `shard ${shard.shardId}: card ${card} (${uuid}) is not among the Vulkan devices (vulkaninfo --summary lists ` +
        `${names}): install the NVIDIA Vulkan driver (its ICD, e.g. libnvidia-gl-<driver version>) so the Vulkan ` +
        "loader sees this card, or run llama.cpp's CUDA build (agent.yaml engines.llamacpp.backend: cuda)",
    );
  });
}

export const llamacpp = {
  engine: "llamacpp",
  capabilities: ENGINE_CAPABILITIES.llamacpp,
  argv(shard, o) {
    if (shard.nnodes > 1) {
      throw new Error(
        `shard ${shard.shardId} spans ${shard.nnodes} nodes, but llama.cpp runs on one node only here: ` +
          "give the llamacpp profile nodes: 1",
      );
    }
    return [
      ...program(o, ["llama-server"]),
      "-m",
      shard.weightsPath,
      "--host",
      o.host,
      "--port",
      String(shard.httpPort),
      // Every layer on the GPUs; llama.cpp splits layers across all visible devices by itself.
      "-ngl",
      "999",
      "--alias",
      shard.model,
      // its /metrics (what a drain reads) is served only with --metrics
      ...withFlag(shard.profile.args, "--metrics"),
      ...shard.profile.args,
    ];
  },
  devices(shard, o) {
    if (o.backend !== "vulkan") return undefined;
    if (shard.visibleDevices.startsWith("MIG-") || shard.deviceIds.some((id) => id >= 1000)) {
      throw new Error(
        `shard ${shard.shardId} is on a MIG instance (${shard.visibleDevices}), but Vulkan cannot address MIG instances: ` +
          "run llama.cpp's CUDA build on MIG, or give this profile whole GPUs",
      );
    }
    // Without the Vulkan listing (no vulkaninfo on this node, or it failed) the card indices go as they are: right only
    // when the loader lists exactly the NVIDIA cards, in nvidia-smi's order.
    const ids = o.vulkanDevices ? vulkanIndices(shard, o.vulkanDevices, o.cardUuids ?? {}) : shard.deviceIds;
    return { GGML_VK_VISIBLE_DEVICES: ids.join(",") };
  },
  healthPath: (_shard) => "/health",
  readiness: (r) => readHealth(r, "loading"),
  inflight: {
    path: "/metrics",
    read: prometheusSum("llamacpp:requests_processing", "llamacpp:requests_deferred"),
  },
  version: [["llama-server", "--version"]],
} satisfies EngineAdapter;
