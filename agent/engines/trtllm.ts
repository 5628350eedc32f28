// TensorRT-LLM's trtllm-serve. Flags follow the trtllm-serve command reference (MODEL, --host, --port, --tp_size,
// --pp_size; GET /health).
import { ENGINE_CAPABILITIES } from "../../shared/engines.js";
import { program, pythonDistVersion, readHealth } from "./common.js";
import type { EngineAdapter } from "./types.js";

/** Running plus queued requests of the latest iteration in trtllm-serve's /metrics JSON; undefined when none is listed. */
export function iterationStatsInflight(body: string): number | undefined {
  let stats: unknown;
  try {
    stats = JSON.parse(body);
  } catch {
    return undefined;
  }
  const last = Array.isArray(stats) ? (stats.at(-1) as Record<string, unknown> | undefined) : undefined;
  const count = (k: string) => (typeof last?.[k] === "number" ? (last[k] as number) : undefined);
  const active = count("numActiveRequests");
  return active === undefined ? undefined : active + (count("numQueuedRequests") ?? 0);
}

export const trtllm = {
  engine: "trtllm",
  capabilities: ENGINE_CAPABILITIES.trtllm,
  argv(shard, o) {
    if (shard.nnodes > 1) {
      throw new Error(
        `shard ${shard.shardId} spans ${shard.nnodes} nodes, but multi-node TensorRT-LLM needs mpirun or Slurm to ` +
          "launch its ranks, which llmgw's agent does not do: give the trtllm profile nodes: 1",
      );
    }
    // No --served_model_name: older trtllm-serve releases reject it; add it to the profile's args where supported.
    return [
      ...program(o, ["trtllm-serve"]),
      shard.weightsPath,
      "--host",
      o.host,
      "--port",
      String(shard.httpPort),
      "--tp_size",
      String(shard.profile.tp),
      "--pp_size",
      String(shard.profile.pp),
      ...shard.profile.args,
    ];
  },
  healthPath: (_shard) => "/health",
  // trtllm-serve serves HTTP only once its LLM is built (refused while loading); its /health answers 503 only when the
  // executor is broken (OpenAIServer.health): dead, as for vLLM
  readiness: (r) => readHealth(r, "dead"),
  // GET /metrics: JSON iteration stats since the last call (PyTorch backend: with enable_iter_perf_stats); an empty
  // list says nothing, so the drain falls back to the router's count
  inflight: { path: "/metrics", read: iterationStatsInflight },
  // trtllm-serve has no --version (click answers "No such option", exit 2): the distribution's metadata it is
  version: [pythonDistVersion("tensorrt_llm", "tensorrt-llm")],
} satisfies EngineAdapter;
