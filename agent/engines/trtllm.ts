// TensorRT-LLM's trtllm-serve. Flags follow the trtllm-serve command reference (MODEL, --host, --port, --tp_size,
// --pp_size; GET /health).
import { compareVersions, ENGINE_CAPABILITIES } from "../../shared/engines.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
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

/**
 * The first release whose trtllm-serve is known to take --served_model_name (added by NVIDIA/TensorRT-LLM#11711, Feb
 * 2026; 1.3.0rc15 is the earliest release it is confirmed in). Older ones refuse the flag and show the weights
 * directory's name in /v1/models instead; their chat and completion paths do not check a request's model, so routing
 * works either way.
 */
export const SERVED_NAME_SINCE = "1.3.0rc15";

/** `--served_model_name <model>` when the installed release takes it and the profile does not set it itself. */
function servedName(shard: StartShard, version: string | undefined): string[] {
  const order = version === undefined ? undefined : compareVersions(version, SERVED_NAME_SINCE);
  const own = shard.profile.args.some((a) => a === "--served_model_name" || a.startsWith("--served_model_name="));
  return order !== undefined && order >= 0 && !own ? ["--served_model_name", shard.model] : [];
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
      ...servedName(shard, o.version),
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
