// llama.cpp's llama-server. Flags follow llama.cpp's tools/server/README.md (-m, --host, --port, -ngl, -a/--alias;
// GET /health: 503 "Loading model" while loading, 200 when ready). Vulkan device selection lives in env.ts.
import { program, readHealth } from "./common.js";
import type { EngineAdapter } from "./types.js";

export const llamacpp = {
  engine: "llamacpp",
  argv(shard, o) {
    if (shard.nnodes > 1) {
      throw new Error(
        `shard ${shard.shardId} spans ${shard.nnodes} nodes, but llama.cpp runs on one node only here: ` +
          "give the llamacpp profile nodes: 1",
      );
    }
    return [
      ...program(o, ["llama-server"]),
      "-m", shard.weightsPath,
      "--host", o.host,
      "--port", String(shard.httpPort),
      // Every layer on the GPUs; llama.cpp splits layers across all visible devices by itself.
      "-ngl", "999",
      "--alias", shard.model,
      ...shard.profile.args,
    ];
  },
  healthPath: (_shard) => "/health",
  readiness: (r) => readHealth(r, "loading"),
  version: ["llama-server", "--version"],
} satisfies EngineAdapter;
