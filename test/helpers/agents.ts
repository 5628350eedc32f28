// Real agents for end-to-end tests: the simulated cluster's pieces (agent/sim/cluster.ts, shared with `llmgw demo`),
// agent processes, and the engines they recorded that still run.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { HGX_SMI, processAlive, recordedPid } from "../../agent/sim/cluster.js";
import { LLMGW, start } from "./process.js";

export {
  type AgentSetup,
  FAKE_SMI,
  HGX_SMI,
  IB_ROOT,
  killEngines,
  mockProfile,
  recordedPid,
  writeAgentConfig,
} from "../../agent/sim/cluster.js";

/** Starts `llmgw agent --config <file>` as a real process on the HGX captures. */
export const startAgent = (config: string, args: string[] = []) =>
  start(process.execPath, [LLMGW, "agent", "--config", config, ...args], { env: HGX_SMI });

/**
 * The engines recorded in these state dirs (agents' and the demo's) whose process still runs, by `dir/shardId`: what a
 * test started and nothing else on the machine.
 */
export function liveEngines(stateDirs: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const dir of stateDirs) {
    let names: string[] = [];
    try {
      names = readdirSync(join(dir, "shards")).filter((n) => n.endsWith(".json"));
    } catch {
      continue;
    }
    for (const n of names) {
      const shardId = n.slice(0, -5);
      const pid = recordedPid(dir, shardId);
      if (processAlive(pid)) out.set(`${dir}/${shardId}`, pid);
    }
  }
  return out;
}

/** The agents' state dirs under a demo's (or a simulated cluster's) directory. */
export const stateDirsIn = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.startsWith("state-"))
    .map((n) => join(dir, n));
