// Real agents for end-to-end tests: the simulated cluster's pieces (agent/sim/cluster.ts, shared with `llmgw demo`),
// agent processes, and a scan of running processes.
import { readdirSync, readFileSync } from "node:fs";
import { HGX_SMI } from "../../agent/sim/cluster.js";
import { LLMGW, start } from "./process.js";

export { FAKE_SMI, HGX_SMI, IB_ROOT, killEngines, mockProfile, recordedPid, writeAgentConfig, type AgentSetup } from "../../agent/sim/cluster.js";

/** Starts `llmgw agent --config <file>` as a real process on the HGX captures. */
export const startAgent = (config: string, args: string[] = []) => start(process.execPath, [LLMGW, "agent", "--config", config, ...args], { env: HGX_SMI });

/** Pids of running processes whose command line contains every one of `words`. */
export function pidsWithArgs(...words: string[]): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (words.every((w) => argv.includes(w))) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
