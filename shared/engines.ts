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

/** A version's order: its release numbers, then its pre-release (dev < a < b < rc < the release itself). */
function versionKey(version: string): { release: number[]; pre: [number, number] } | undefined {
  const m = /^v?(\d+(?:\.\d+)*)(?:[.-]?(dev|alpha|a|beta|b|rc|c)\.?(\d*))?/i.exec(version.trim());
  if (!m) return undefined;
  const tag = m[2]?.toLowerCase();
  const rank = tag === undefined ? 4 : tag === "dev" ? 0 : tag.startsWith("a") ? 1 : tag.startsWith("b") ? 2 : 3;
  return { release: m[1]!.split(".").map(Number), pre: [rank, Number(m[3] || 0)] };
}

/**
 * Orders two engine versions as Python's packaging does for the forms engines publish ("0.24.0", "1.3.0rc15",
 * "0.23.1.dev7+g1a2b"): negative when `a` comes first; undefined when either is not numbered (llama.cpp's "b4589").
 */
export function compareVersions(a: string, b: string): number | undefined {
  const x = versionKey(a);
  const y = versionKey(b);
  if (!x || !y) return undefined;
  for (let i = 0; i < Math.max(x.release.length, y.release.length); i++) {
    const d = (x.release[i] ?? 0) - (y.release[i] ?? 0);
    if (d) return d;
  }
  return x.pre[0] - y.pre[0] || x.pre[1] - y.pre[1];
}

/** Why `engine` at `version` cannot run on a MIG instance; undefined when it can, or when its version is not known. */
export function migVersionRefusal(engine: string, version: string | undefined): string | undefined {
  const since = MIG_SINCE[engine as EngineName];
  const order = since && version !== undefined ? compareVersions(version, since) : undefined;
  return order !== undefined && order < 0
    ? `${engine} ${version} crashes at start on a MIG instance (before ${since})`
    : undefined;
}

/** Ports an engine binds on rank 0's node besides its HTTP port and the leader port. */
export type LeaderPorts = {
  /** Offsets from the leader port, ascending. */
  offsets: number[];
  /** What takes them, as a person reads it in a pending reason. */
  why: string;
};

/**
 * SGLang with DP attention moves its processes' queues from IPC files to TCP: six ports from dist_init_port + 1
 * (tokenizer, detokenizer, rpc, metrics, scheduler input, load collector) and the DP controller's handshake at
 * dist_init_port + 13 (PortArgs.init_new, DP_ATTENTION_HANDSHAKE_PORT_DELTA); it checks each is free and fails at
 * start when one is taken. On one node it would put dist_init_port at --port + 233, outside any range llmgw hands
 * out, so the adapter gives it --dist-init-addr there too: dist_init_port is always the leader port.
 */
const SGLANG_DP_ATTENTION: LeaderPorts = {
  offsets: [1, 2, 3, 4, 5, 6, 13],
  why: "sglang with --enable-dp-attention also binds the leader port + 1…6 and + 13",
};

/**
 * The ports `engine` takes for itself with a profile's args, beyond the two placement always gives a leader;
 * undefined when it takes none (vLLM, and SGLang without DP attention, pick free ports at random; llama.cpp and
 * TensorRT-LLM listen on --port only).
 */
export function leaderPorts(engine: string, args: readonly string[]): LeaderPorts | undefined {
  if (engine === "sglang" && args.includes("--enable-dp-attention")) return SGLANG_DP_ATTENTION;
  return undefined;
}
