// A simulated GPU cluster on one host, shared by `llmgw demo` and the end-to-end tests: agent.yaml files for nodes
// on 127.0.0.1 that see real nvidia-smi captures (through the fake nvidia-smi) and a real InfiniBand sysfs capture,
// the mock engine as a `command` profile, and clean-up of the detached engines the agents leave behind.
// The captures are read from test/fixtures, in a checkout or in the installed package (which ships the ones replayed).
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stringify } from "yaml";

/** The nearest directory at or above `from` that holds llmgw's files: a checkout, or the installed package. */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "agent", "sim", "fake-nvidia-smi"))) return dir;
    if (dirname(dir) === dir)
      throw new Error(`the simulator's files (agent/sim, test/fixtures) are not found above ${from}`);
  }
}

// this file runs from agent/sim/ in a checkout, or bundled into dist/
export const ROOT = packageRoot(import.meta.dirname);
/** The built CLI, which the simulated nodes run. */
export const LLMGW = join(ROOT, "dist", "llmgw.js");
export const FIXTURES = join(ROOT, "test", "fixtures");
export const SIM_DIR = join(ROOT, "agent", "sim");
export const FAKE_SMI = join(SIM_DIR, "fake-nvidia-smi");
export const IB_ROOT = join(FIXTURES, "ib-sysfs", "gpud-h100-sys-class-infiniband");

/** The fake nvidia-smi's environment for an 8× H100 HGX node (real captures). */
export const HGX_SMI = {
  FAKE_SMI_XML: join(FIXTURES, "smi-xml", "hgx-8x-h100-80gb-hbm3-nvswitch-zero-cluster-580.105.08-k8stestinfra.xml"),
  FAKE_SMI_L: join(FIXTURES, "smi-L", "CRAFTED-hgx-8x-h100-from-k8stestinfra-xml.txt"),
  FAKE_SMI_TOPO: join(FIXTURES, "topo", "hgx-h100-8x-nv18-8nic-legend-spaces-sglang30401.txt"),
};

/** A model profile that runs the mock engine through the `command` adapter; `engineArgs` go to `llmgw mock-engine`. */
export const mockProfile = (name: string, more: Record<string, unknown> = {}, engineArgs: string[] = []) => ({
  name,
  engine: "command",
  gpuClass: "h100-80g",
  args: [
    process.execPath,
    LLMGW,
    "mock-engine",
    "--port",
    "{port}",
    "--model",
    "{model}",
    "--host",
    "{host}",
    ...engineArgs,
  ],
  startupTimeoutS: 60,
  ...more,
});

export type AgentSetup = {
  nodeId: string;
  server: string;
  joinToken: string;
  dir: string;
  ports: [number, number];
  extra?: Record<string, unknown>;
};

/** Writes an agent.yaml for a node on 127.0.0.1 with its own state dir; returns its path and the state dir. */
export function writeAgentConfig(a: AgentSetup): { config: string; stateDir: string } {
  const stateDir = join(a.dir, `state-${a.nodeId}`);
  const config = join(a.dir, `${a.nodeId}.yaml`);
  writeFileSync(
    config,
    stringify({
      server: a.server,
      join_token: a.joinToken,
      node_id: a.nodeId,
      mgmt_addr: "127.0.0.1",
      bind_host: "127.0.0.1",
      state_dir: stateDir,
      port_range: { first: a.ports[0], last: a.ports[1] },
      nvidia_smi: FAKE_SMI,
      ib_root: IB_ROOT,
      imex_ctl: join(a.dir, "no-imex-ctl"),
      // the mock engines are `command` profiles; nothing is probed
      engines: { allow: ["command"] },
      check_interval_s: 1,
      stop_grace_s: 2,
      drain_timeout_s: 2,
      ...a.extra,
    }),
  );
  return { config, stateDir };
}

/** True while a process with this pid exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The engine pid recorded in a state dir for a shard. */
export function recordedPid(stateDir: string, shardId: string): number {
  return (JSON.parse(readFileSync(join(stateDir, "shards", `${shardId}.json`), "utf8")) as { pid: number }).pid;
}

/** Kills the process group of every engine recorded in the state dirs (engines outlive agents by design). */
export function killEngines(stateDirs: string[], signal: NodeJS.Signals = "SIGKILL"): void {
  for (const dir of stateDirs) {
    let names: string[] = [];
    try {
      names = readdirSync(join(dir, "shards")).filter((n) => n.endsWith(".json"));
    } catch {
      continue;
    }
    for (const n of names) {
      try {
        process.kill(-recordedPid(dir, n.slice(0, -5)), signal);
      } catch {
        // already gone
      }
    }
  }
}
