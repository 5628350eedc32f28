import { z } from "../z.js";
import { StartShard } from "./assignment.js";
import { Entries, idAt, repeats, ShardState, Text } from "./common.js";
import { Gpu } from "./gpu.js";
import { FabricAttachment, Hca } from "./hca.js";
import { ShardTransport } from "./transport.js";

export const Host = z
  .strictObject({
    osId: Text(64).optional().openapi({ example: "ubuntu" }),
    osVersion: Text(64).optional().openapi({ example: "24.04" }),
    osCodename: Text(64).optional().openapi({ example: "noble" }),
    arch: Text(32).openapi({ example: "x86_64" }),
    kernel: Text(128).optional(),
    cpuModel: Text(256).optional(),
    cpuCount: z.number().int().nonnegative().optional(),
    cpuFlags: z.array(Text(64)).max(512),
    nvidiaDriver: Text(64).optional().openapi({ example: "580.105.08" }),
  })
  .openapi("Host");

export const Memory = z
  .strictObject({
    totalMiB: z.number().int().nonnegative(),
    availableMiB: z.number().int().nonnegative().optional(),
  })
  .openapi("Memory");

export const Storage = z
  .strictObject({
    path: Text(1024).openapi({ example: "/models" }),
    freeBytes: z.number().int().nonnegative(),
    totalBytes: z.number().int().nonnegative(),
    shared: z.boolean().openapi({ description: "on a network file system (NFS, Lustre, …) every node sees" }),
    fsType: Text(64).optional(),
  })
  .openapi("Storage");

export const LocalWeights = z
  .strictObject({
    path: Text(1024).openapi({ example: "/models/llama-3.1-70b-instruct" }),
    sizeBytes: z.number().int().nonnegative(),
    shared: z.boolean().optional(),
  })
  .openapi("LocalWeights");

export const Engines = z
  .strictObject({
    probed: z
      .array(Text(32))
      .max(32)
      .openapi({ example: ["vllm", "sglang", "llamacpp"] }),
    versions: Entries(Text(32), Text(128), 32).openapi({ example: { vllm: "0.11.0" } }),
    backends: Entries(Text(32), z.enum(["cuda", "vulkan"]), 32)
      .optional()
      .openapi({
        example: { llamacpp: "vulkan" },
        description: "an engine's GPU backend where it is not CUDA's (agent.yaml `engines.<engine>.backend`)",
      }),
    warnings: Entries(Text(32), Text(1024), 32)
      .optional()
      .openapi({ description: "engines whose presence is not known: their probe ran out of time" }),
  })
  .openapi("Engines");

export const ImexState = z.enum(["ready", "degraded", "down", "absent", "unknown"]).openapi("ImexState");
export type ImexState = z.infer<typeof ImexState>;

export const Imex = z
  .strictObject({
    state: ImexState,
    domainState: Text(32).optional().openapi({ example: "UP" }),
    channels: z.number().int().nonnegative(),
    version: Text(64).optional(),
  })
  .openapi("Imex");

/** A shard the agent found running at start, reported so the control plane can adopt it. */
export const RunningShard = z
  .strictObject({
    shardId: Text(64),
    replicaId: Text(64),
    rank: z.number().int().nonnegative(),
    state: Text(32).openapi({
      description: `one of ${ShardState.options.join(", ")}; anything else is read as failed`,
    }),
    fingerprint: Text(128),
    httpPort: z.number().int().min(1).max(65535).optional(),
    pid: z.number().int().positive().optional(),
    startedAt: z.number().int().nonnegative().optional(),
    spec: StartShard.optional().openapi({
      description:
        "what the engine was started with; a control plane that has no row for the shard (restored from an older " +
        "backup, or the node deleted and registered again) adopts it from this when a deployment is short of it",
    }),
    transport: ShardTransport.optional().openapi({
      description: "what its NCCL was found to use, as the shard's reports say (kept across an agent restart)",
    }),
  })
  .openapi("RunningShard");
export type RunningShard = z.infer<typeof RunningShard>;

export const DiscoveryError = z
  .strictObject({
    source: Text(64).openapi({ example: "nvidia-smi -q -x" }),
    message: Text(2048),
  })
  .openapi("DiscoveryError");

/**
 * Ids an inventory uses twice: heartbeats name GPUs by UUID and ports by adapter and number, devices are stored by
 * index, so each must name one thing.
 */
function repeatedIds(inv: z.infer<typeof InventoryFields>) {
  const migs = inv.gpus.flatMap((g, i) => (g.mig?.instances ?? []).map((m, j) => ({ m, i, j })));
  return [
    ...repeats(
      "GPU index",
      inv.gpus.map((g, i) => idAt(g.index, "gpus", i, "index")),
    ),
    ...repeats(
      "GPU UUID",
      inv.gpus.map((g, i) => idAt(g.uuid, "gpus", i, "uuid")),
    ),
    ...inv.gpus.flatMap((g, i) =>
      repeats(
        "MIG instance index",
        (g.mig?.instances ?? []).map((m, j) => idAt(m.index, "gpus", i, "mig", "instances", j, "index")),
      ),
    ),
    ...repeats(
      "MIG instance UUID",
      migs.map(({ m, i, j }) => idAt(m.uuid, "gpus", i, "mig", "instances", j, "uuid")),
    ),
    ...repeats(
      "HCA",
      inv.hcas.map((h, i) => idAt(h.name, "hcas", i, "name")),
    ),
    ...inv.hcas.flatMap((h, i) =>
      repeats(
        `port of ${h.name}`,
        h.ports.map((p, j) => idAt(p.port, "hcas", i, "ports", j, "port")),
      ),
    ),
  ];
}

const InventoryFields = z.strictObject({
  gpuSource: z.enum(["nvml", "nvidia-smi", "unavailable", "none"]).openapi({
    description:
      "where the GPU facts came from: `unavailable` when no source could be read, `none` when GPUs were skipped",
  }),
  host: Host,
  memory: Memory,
  storage: z.array(Storage).max(64),
  weights: z.array(LocalWeights).max(4096),
  engines: Engines,
  gpus: z.array(Gpu).max(64),
  imex: Imex,
  hcas: z.array(Hca).max(64),
  fabrics: z.array(FabricAttachment).max(16),
  errors: z.array(DiscoveryError).max(64).openapi({ description: "sources that failed; the rest is still reported" }),
});

/** What the agent discovered on its node: every fact placement and the views use. */
export const Inventory = InventoryFields.superRefine((inv, ctx) => {
  for (const issue of repeatedIds(inv)) ctx.addIssue({ code: "custom", ...issue });
}).openapi("Inventory");
export type Inventory = z.infer<typeof Inventory>;
export type InventoryInput = z.input<typeof Inventory>;
