import { z } from "../z.js";
import { Engine } from "./model.js";

/** One shard the control plane wants running on a node: everything the agent needs to start it. */
export const StartShard = z
  .object({
    shardId: z.string().openapi({ example: "r12-s0" }),
    replicaId: z.string().openapi({ example: "r12" }),
    deployment: z.string(),
    model: z.string().openapi({ description: "the model's served name", example: "meta-llama/Llama-3.1-70B-Instruct" }),
    weightsPath: z.string(),
    rank: z.number().int().openapi({ description: "0 is the leader, whose HTTP endpoint the router uses" }),
    nnodes: z.number().int(),
    leaderAddr: z.string().openapi({ example: "10.0.0.11" }),
    leaderPort: z.number().int(),
    httpPort: z.number().int(),
    enginePorts: z.array(z.number().int()).optional().openapi({
      description:
        "rank 0 only: ports the engine binds itself besides httpPort and leaderPort (SGLang with --enable-dp-attention: leaderPort + 1…6 and + 13), held for it",
    }),
    deviceIds: z
      .array(z.number().int())
      .openapi({ description: "card indices, or 1000 + 100 × card + instance for MIG" }),
    visibleDevices: z
      .string()
      .openapi({ description: "CUDA_VISIBLE_DEVICES: `0,1,2,3` or `MIG-<uuid>`", example: "0,1,2,3" }),
    hcas: z.array(z.string()).openapi({ description: "InfiniBand HCAs for NCCL (IB fabric only)" }),
    mgmtInterface: z.string().optional().openapi({ description: "for NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME" }),
    profile: z.object({
      name: z.string(),
      engine: Engine,
      tp: z.number().int(),
      pp: z.number().int(),
      gpusPerNode: z.number().int(),
      nodes: z.number().int(),
      args: z.array(z.string()),
      env: z.record(z.string(), z.string()),
      startupTimeoutS: z.number().int(),
    }),
    env: z
      .record(z.string(), z.string())
      .openapi({ description: "from placement: NCCL_MNNVL_ENABLE, NCCL_CUMEM_ENABLE, NCCL_IB_HCA …" }),
    pool: z.string(),
    fabric: z.string().openapi({ description: "`single`, `nvlink:<clusterUuid>.<cliqueId>` or `ib:<fabric>`" }),
    fingerprint: z.string().openapi({ description: "changes whenever the engine's command line would" }),
  })
  .openapi("StartShard");
export type StartShard = z.infer<typeof StartShard>;

export const Assignments = z
  .object({
    index: z
      .number()
      .int()
      .openapi({ description: "pass it back as `index` to wait for the next change (also in X-Llmgw-Index)" }),
    shards: z
      .array(StartShard)
      .openapi({ description: "the node's full desired set: start what is missing, stop what is not listed" }),
  })
  .openapi("Assignments");
