// The engine registry: one line per adapter, and the one function that turns a shard into a command line and env.
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { Engine } from "../../shared/schemas/model.js";
import { command } from "./command.js";
import { shardEnv } from "./env.js";
import { llamacpp } from "./llamacpp.js";
import { sglang } from "./sglang.js";
import { withTemplates } from "./template.js";
import { trtllm } from "./trtllm.js";
import type { EngineAdapter, EngineOptions } from "./types.js";
import { vllm } from "./vllm.js";

export const engines = { vllm, sglang, llamacpp, trtllm, command } satisfies Record<Engine, EngineAdapter>;

/** The adapter that runs `engine`. */
export function adapterFor(engine: Engine): EngineAdapter {
  return engines[engine];
}

/** The command line and environment (on top of the agent's own) that start `shard`; throws when it cannot run here. */
export function launch(shard: StartShard, o: EngineOptions): { argv: string[]; env: Record<string, string> } {
  const adapter = adapterFor(shard.profile.engine);
  const s = withTemplates(shard, o);
  return { argv: adapter.argv(s, o), env: shardEnv(s, adapter, o) };
}
