// The contract every engine adapter fulfils: how to start a shard (argv + env), how to read its readiness from one
// HTTP probe, and how to ask the installed engine for its version. Adapters are plain objects (no I/O of their own).
// Adding an engine: its file here, its name and capabilities in shared/engines.ts (the `Engine` enum is built from it)
// and one line in index.ts (the compiler refuses a registry that misses an engine); discovery probes it and the agent
// launches it from there.

import type { EngineCapabilities } from "../../shared/engines.js";
import type { StartShard } from "../../shared/schemas/assignment.js";
import type { Engine } from "../../shared/schemas/model.js";

/** What the node's agent.yaml says about an engine, and where engines listen. */
export type EngineOptions = {
  /** Address the engine binds its HTTP server to. */
  host: string;
  /**
   * The command that starts the engine when agent.yaml overrides it (e.g. a venv's `vllm`), else the adapter's default.
   */
  command?: string[];
  /** This node's address (agent.yaml mgmt_addr, or the one found): `{nodeAddr}` in a profile's args and env. */
  nodeAddr?: string;
  /** The engine's version on this node, as discovery probed it; absent when not known. */
  version?: string;
  /** llama.cpp's GPU backend on this node (the build that is installed). */
  backend?: "cuda" | "vulkan";
  /**
   * The Vulkan loader's physical devices in enumeration order (the indices GGML_VK_VISIBLE_DEVICES counts), each with
   * its device UUID when the driver reports one (`vulkaninfo --summary`). Absent when not discovered.
   */
  vulkanDevices?: { name: string; uuid?: string; vendorId?: string }[];
  /**
   * Each card's UUID by its nvidia-smi index (`GPU-…`, from this node's inventory): how a placed card is found among
   * `vulkanDevices`.
   */
  cardUuids?: Record<number, string>;
};

/** One HTTP probe of an engine's health endpoint, as seen from the agent. */
export type ProbeResult =
  | { kind: "refused" }
  | { kind: "status"; status: number; body: string }
  | { kind: "error"; message: string };

/** What a probe says: still coming up, serving, or broken for good. */
export type Readiness = "loading" | "ready" | "dead";

export type EngineAdapter = {
  engine: Engine;
  /** What it can run on: its row of shared/engines.ts, which the catalog's validation and placement read too. */
  capabilities: EngineCapabilities;
  /** The command line (program first). Throws an Error whose message says why a shard cannot run on this node. */
  argv(shard: StartShard, o: EngineOptions): string[];
  /** Environment this engine needs beyond the common per-shard variables (see env.ts); may throw like argv. */
  env?(shard: StartShard, o: EngineOptions): Record<string, string>;
  /** The path probed for readiness on this shard, or null when this shard serves no HTTP (multi-node ranks > 0). */
  healthPath(shard: StartShard): string | null;
  /** Reads one probe result. */
  readiness(r: ProbeResult): Readiness;
  /**
   * How a drain reads the requests the engine is still working on: GET `path`, whose body `read` turns into a count
   * (undefined when it does not say; the drain then waits on the router's own count for the endpoint).
   */
  inflight?: { path: string; read(body: string): number | undefined };
  /**
   * The variables that give the engine its devices, when they are not CUDA's `CUDA_VISIBLE_DEVICES` (llama.cpp's Vulkan
   * build); may throw like argv.
   */
  devices?(shard: StartShard, o: EngineOptions): Record<string, string> | undefined;
  /**
   * The commands that print the installed version, tried in order until one exits 0: discovery's probes for this
   * engine (agent.yaml's `probe` replaces them). Absent for an engine that has no installed program to ask (`command`
   * runs what its profile names; placement needs no probe).
   */
  version?: string[][];
};
