// What each inference engine can do, as llmgw runs it: the one table the catalog's validation (a model written with
// a profile its engine cannot run is refused), placement (never offer what the engine cannot use) and the agent's
// adapters (agent/engines/) all read.

/** What an engine can run on. */
export type EngineCapabilities = {
  /** One replica across several nodes (the agent starts every rank). */
  multiNode: boolean;
  /** A MIG instance as its device (addressed by its UUID in CUDA_VISIBLE_DEVICES). */
  mig: boolean;
  /** A build on Vulkan instead of CUDA: it picks cards by Vulkan index and cannot address a MIG instance. */
  vulkan: boolean;
};

export const ENGINE_NAMES = ["vllm", "sglang", "llamacpp", "trtllm", "command"] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export const ENGINE_CAPABILITIES: Record<EngineName, EngineCapabilities> = {
  // vLLM and SGLang start a rank per node themselves (Ray / --nnodes with a leader address)
  vllm: { multiNode: true, mig: true, vulkan: false },
  sglang: { multiNode: true, mig: true, vulkan: false },
  // llama.cpp's server runs on one machine; its CUDA build takes a MIG instance, its Vulkan build cannot
  llamacpp: { multiNode: false, mig: true, vulkan: true },
  // multi-node TensorRT-LLM needs mpirun or Slurm to launch its ranks, which the agent does not do
  trtllm: { multiNode: false, mig: true, vulkan: false },
  // a command is told its rank, leader address and port: it may span nodes
  command: { multiNode: true, mig: true, vulkan: false },
};

/** Why `engine` cannot run a profile across `nodes` nodes; undefined when it can. */
export function multiNodeRefusal(engine: EngineName, nodes: number): string | undefined {
  if (nodes <= 1 || ENGINE_CAPABILITIES[engine].multiNode) return undefined;
  const others = ENGINE_NAMES.filter((e) => ENGINE_CAPABILITIES[e].multiNode && e !== "command").join(" or ");
  return `engine ${engine} runs a replica on one node only, but the profile asks for ${nodes} nodes: give it nodes: 1, or use ${others}`;
}

/**
 * Flags with which a replica on one node still talks to peers over the network: data parallelism (DP ranks that may
 * sit on other nodes) and expert parallelism (all-to-all kernels over RDMA). As each engine's CLI names them.
 */
const PEER_FLAGS: Partial<Record<EngineName, readonly string[]>> = {
  vllm: ["--data-parallel-size", "-dp", "--data-parallel-address", "--enable-expert-parallel"],
  sglang: ["--dp-size", "--dp", "--enable-dp-attention", "--ep-size", "--ep", "--expert-parallel-size"],
};

/** True when a profile's args make its engine talk to peers (so its GPUs' nearest NICs matter on one node too). */
export function talksToPeers(engine: string, args: readonly string[]): boolean {
  const flags = PEER_FLAGS[engine as EngineName] ?? [];
  return args.some((a) => flags.some((f) => a === f || a.startsWith(`${f}=`)));
}

/**
 * Flags llmgw writes on each engine's command line, as its CLI spells them (aliases included). Every engine keeps the
 * last value of a repeated flag, so one in a profile's args would silently take the engine off the port its health
 * probe and the router use, off the GPU count placement gave it, or off the model name clients send.
 */
const OWNED_FLAGS: Record<EngineName, Record<string, string>> = {
  vllm: {
    "--host": "the address the agent binds engines to (agent.yaml bind_host)",
    "--port": "the port placement gave the shard",
    "--model": "the model's weightsPath",
    "--served-model-name": "the model's servedName",
    "--tensor-parallel-size": "the profile's tp",
    "-tp": "the profile's tp",
    "--pipeline-parallel-size": "the profile's pp",
    "-pp": "the profile's pp",
    "--nnodes": "the profile's nodes",
    "--node-rank": "each shard's rank",
    "--master-addr": "the leader's address",
    "--master-port": "the leader's port",
    "--headless": "the ranks after the first",
    "--distributed-executor-backend": "llmgw (mp across nodes)",
  },
  sglang: {
    "--host": "the address the agent binds engines to (agent.yaml bind_host)",
    "--port": "the port placement gave the shard",
    "--model-path": "the model's weightsPath",
    "--model": "the model's weightsPath",
    "--served-model-name": "the model's servedName",
    "--tp-size": "the profile's tp",
    "--tensor-parallel-size": "the profile's tp",
    "--tp": "the profile's tp",
    "--pp-size": "the profile's pp",
    "--pipeline-parallel-size": "the profile's pp",
    "--nnodes": "the profile's nodes",
    "--node-rank": "each shard's rank",
    "--dist-init-addr": "the leader's address and port",
    "--nccl-init-addr": "the leader's address and port",
  },
  llamacpp: {
    "--host": "the address the agent binds engines to (agent.yaml bind_host)",
    "--port": "the port placement gave the shard",
    "-m": "the model's weightsPath",
    "--model": "the model's weightsPath",
    "-a": "the model's servedName",
    "--alias": "the model's servedName",
  },
  trtllm: {
    "--host": "the address the agent binds engines to (agent.yaml bind_host)",
    "--port": "the port placement gave the shard",
    "--tp_size": "the profile's tp",
    "--tensor_parallel_size": "the profile's tp",
    "--pp_size": "the profile's pp",
    "--pipeline_parallel_size": "the profile's pp",
  },
  command: {},
};

/** Why `arg` may not be in a profile's args for `engine` (llmgw sets it); undefined when it may. */
export function ownedFlagRefusal(engine: EngineName, arg: string): string | undefined {
  const flag = arg.startsWith("-") ? arg.split("=")[0]! : undefined;
  const what = flag === undefined ? undefined : OWNED_FLAGS[engine][flag];
  return what && `${flag} is set by llmgw for ${engine} (to ${what}): remove it from args`;
}

/**
 * Engines whose releases before a version crash at start when their device is a MIG instance
 * (`CUDA_VISIBLE_DEVICES=MIG-<uuid>`). vLLM read every entry with int() until its device selection was reworked
 * (vllm-project/vllm#41848, #46132; fixed by #45026, first released in 0.24.0). SGLang leaves the variable to CUDA,
 * and llama.cpp's CUDA build and TensorRT-LLM have no such report.
 */
const MIG_SINCE: Partial<Record<EngineName, string>> = { vllm: "0.24.0" };

/** A release's leading numbers: "0.23.1.dev12+gabc" → [0, 23, 1]; undefined for one that is not numbered. */
function releaseOf(version: string): number[] | undefined {
  const m = /^v?(\d+(?:\.\d+)*)/.exec(version.trim());
  return m ? m[1]!.split(".").map(Number) : undefined;
}

/** Why `engine` at `version` cannot run on a MIG instance; undefined when it can, or when its version is not known. */
export function migVersionRefusal(engine: string, version: string | undefined): string | undefined {
  const since = MIG_SINCE[engine as EngineName];
  const have = version === undefined ? undefined : releaseOf(version);
  if (!since || !have) return undefined;
  const want = releaseOf(since)!;
  for (let i = 0; i < want.length; i++) {
    const a = have[i] ?? 0;
    if (a !== want[i])
      return a > want[i]! ? undefined : `${engine} ${version} crashes at start on a MIG instance (before ${since})`;
  }
  return undefined;
}
