// llama.cpp's llama-server. Flags follow llama.cpp's tools/server/README.md (-m, --host, --port, -ngl, -a/--alias;
// GET /health: 503 "Loading model" while loading, 200 when ready). The Vulkan build picks its cards by
// GGML_VK_VISIBLE_DEVICES (Vulkan device indices, which follow the GPU indices), and cannot address MIG instances.
import { ENGINE_CAPABILITIES } from "../../shared/engines.js";
import { program, readHealth } from "./common.js";
import type { EngineAdapter } from "./types.js";

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
    return { GGML_VK_VISIBLE_DEVICES: shard.deviceIds.join(",") };
  },
  healthPath: (_shard) => "/health",
  readiness: (r) => readHealth(r, "loading"),
  version: [["llama-server", "--version"]],
} satisfies EngineAdapter;
