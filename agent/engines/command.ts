// Any OpenAI-compatible server, started from the profile's args as a template (also how tests and the demo run a
// mock engine). The server must answer GET /health on its --port: 2xx ready, 503 loading, anything else dead.
import { ENGINE_CAPABILITIES } from "../../shared/engines.js";
import { program, prometheusSum, readHealth } from "./common.js";
import { placeholders, substitute } from "./template.js";
import type { EngineAdapter } from "./types.js";

export const command = {
  engine: "command",
  capabilities: ENGINE_CAPABILITIES.command,
  argv(shard, o) {
    const values = placeholders(shard, o);
    const argv = [...program(o, []), ...shard.profile.args.map((a) => substitute(a, values, "command profile's args"))];
    if (argv.length === 0) {
      throw new Error(
        `profile ${shard.profile.name} uses engine "command" but has no args: give the server's command line, e.g. ["my-server", "--port", "{port}"]`,
      );
    }
    return argv;
  },
  // A server that is not started from a template (a wrapper script) finds the same facts in its environment.
  env: (shard) => ({
    LLMGW_RANK: String(shard.rank),
    LLMGW_NNODES: String(shard.nnodes),
    LLMGW_LEADER_ADDR: shard.leaderAddr,
    LLMGW_LEADER_PORT: String(shard.leaderPort),
    LLMGW_PORT: String(shard.httpPort),
    LLMGW_MODEL: shard.model,
  }),
  // Every rank gets its own httpPort, so every rank is probed.
  healthPath: (_shard) => "/health",
  readiness: (r) => readHealth(r, "loading"),
  // a server that speaks vLLM's metric names is drained by them (the mock engine does); any other by the router's count
  inflight: { path: "/metrics", read: prometheusSum("vllm:num_requests_running", "vllm:num_requests_waiting") },
} satisfies EngineAdapter;
