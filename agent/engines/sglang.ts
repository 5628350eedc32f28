// SGLang's launch_server. Flags follow SGLang's docs, references/multi_node_deployment/multi_node.md (--nnodes,
// --node-rank, --dist-init-addr) and server arguments (--tp-size, --pp-size, --served-model-name).
import { ENGINE_CAPABILITIES, leaderPorts } from "../../shared/engines.js";
import { program, prometheusSum, pythonDistVersion, readHealth, withFlag } from "./common.js";
import type { EngineAdapter } from "./types.js";

/** host:port as --dist-init-addr wants it, bracketing an IPv6 address. */
function hostPort(addr: string, port: number): string {
  return addr.includes(":") && !addr.startsWith("[") ? `[${addr}]:${port}` : `${addr}:${port}`;
}

export const sglang = {
  engine: "sglang",
  capabilities: ENGINE_CAPABILITIES.sglang,
  argv(shard, o) {
    const { profile } = shard;
    const base = [
      ...program(o, ["python3", "-m", "sglang.launch_server"]),
      "--model-path",
      shard.weightsPath,
      "--host",
      o.host,
      "--port",
      String(shard.httpPort),
      "--served-model-name",
      shard.model,
      // its /metrics (what a drain reads) is served only with --enable-metrics
      ...withFlag(profile.args, "--enable-metrics"),
      "--tp-size",
      String(profile.tp),
      "--pp-size",
      String(profile.pp),
    ];
    const multi =
      shard.nnodes > 1
        ? [
            "--nnodes",
            String(shard.nnodes),
            "--node-rank",
            String(shard.rank),
            "--dist-init-addr",
            hostPort(shard.leaderAddr, shard.leaderPort),
          ]
        : leaderPorts("sglang", profile.args)
          ? // DP attention on one node: its TCP ports follow the leader port placement held, not --port + 233
            ["--dist-init-addr", hostPort("127.0.0.1", shard.leaderPort)]
          : [];
    return [...base, ...multi, ...profile.args];
  },
  // Ranks > 0 serve no API, but once their schedulers are ready they answer /health on --host/--port (SGLang's
  // launch_dummy_health_check_server), so every rank is probed.
  healthPath: (_shard) => "/health",
  // SGLang answers 503 while it warms up (and when a health check fails); the startup deadline bounds it.
  readiness: (r) => readHealth(r, "loading"),
  inflight: { path: "/metrics", read: prometheusSum("sglang:num_running_reqs", "sglang:num_queue_reqs") },
  version: [pythonDistVersion("sglang")],
} satisfies EngineAdapter;
