// vLLM's OpenAI-compatible server. Flags follow vLLM's docs, serving/parallelism_scaling.md ("Running vLLM with
// MultiProcessing": --nnodes, --node-rank, --master-addr, --headless on the other nodes) and ParallelConfig's help.
import { ENGINE_CAPABILITIES } from "../../shared/engines.js";
import { program, prometheusSum, pythonDistVersion, readHealth } from "./common.js";
import type { EngineAdapter } from "./types.js";

export const vllm = {
  engine: "vllm",
  capabilities: ENGINE_CAPABILITIES.vllm,
  argv(shard, o) {
    const { profile } = shard;
    const base = [
      ...program(o, ["vllm"]),
      "serve",
      shard.weightsPath,
      "--host",
      o.host,
      "--port",
      String(shard.httpPort),
      "--served-model-name",
      shard.model,
      "--tensor-parallel-size",
      String(profile.tp),
      "--pipeline-parallel-size",
      String(profile.pp),
    ];
    // Multi-node without Ray: multiprocessing workers on every node meet at the leader's torch.distributed store.
    const multi =
      shard.nnodes > 1
        ? [
            "--distributed-executor-backend",
            "mp",
            "--nnodes",
            String(shard.nnodes),
            "--node-rank",
            String(shard.rank),
            "--master-addr",
            shard.leaderAddr,
            "--master-port",
            String(shard.leaderPort),
            ...(shard.rank > 0 ? ["--headless"] : []),
          ]
        : [];
    return [...base, ...multi, ...profile.args];
  },
  // Headless ranks run workers only: no API server, so nothing to probe.
  healthPath: (shard) => (shard.nnodes > 1 && shard.rank > 0 ? null : "/health"),
  // vLLM opens its port only once the engine is up; a 503 afterwards means the engine died.
  readiness: (r) => readHealth(r, "dead"),
  inflight: { path: "/metrics", read: prometheusSum("vllm:num_requests_running", "vllm:num_requests_waiting") },
  // the distribution's metadata first (fast); `vllm --version` for an install python3 does not see (pipx, a venv)
  version: [pythonDistVersion("vllm"), ["vllm", "--version"]],
} satisfies EngineAdapter;
