import { z } from "../z.js";
import { Entries } from "./common.js";
import { Engine } from "./model.js";

const Port = z.number().int().min(1).max(65535);
const Size = z.number().int().min(1).max(1024);
/** An engine's environment (a profile's, or what placement adds): a map, bounded as a profile's `env` is. */
const Env = Entries(z.string().max(256), z.string().max(4096), 256);

/**
 * One shard the control plane wants running on a node: everything the agent needs to start it. Bounded like the specs
 * it comes from, so that an agent refuses (and reports failed) one shard it cannot use, never the whole answer.
 */
export const StartShard = z
  .object({
    shardId: z.string().min(1).max(64).openapi({ example: "r12-s0" }),
    replicaId: z.string().min(1).max(64).openapi({ example: "r12" }),
    deployment: z.string().max(64),
    model: z
      .string()
      .max(256)
      .openapi({ description: "the model's served name", example: "meta-llama/Llama-3.1-70B-Instruct" }),
    weightsPath: z.string().max(1024),
    rank: z
      .number()
      .int()
      .min(0)
      .max(1023)
      .openapi({ description: "0 is the leader, whose HTTP endpoint the router uses" }),
    nnodes: Size,
    leaderAddr: z.string().max(253).openapi({ example: "10.0.0.11" }),
    leaderPort: Port,
    httpPort: Port,
    enginePorts: z.array(Port).max(16).optional().openapi({
      description:
        "rank 0 only: ports the engine binds itself besides httpPort and leaderPort (SGLang with --enable-dp-attention: leaderPort + 1…6 and + 13), held for it",
    }),
    deviceIds: z
      .array(z.number().int().nonnegative())
      .max(64)
      .openapi({ description: "card indices, or 1000 + 100 × card + instance for MIG" }),
    visibleDevices: z
      .string()
      .max(1024)
      .openapi({ description: "CUDA_VISIBLE_DEVICES: `0,1,2,3` or `MIG-<uuid>`", example: "0,1,2,3" }),
    hcas: z.array(z.string().max(64)).max(64).openapi({ description: "InfiniBand HCAs for NCCL (IB fabric only)" }),
    mgmtInterface: z
      .string()
      .max(64)
      .optional()
      .openapi({ description: "for NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME" }),
    profile: z.object({
      name: z.string().max(64),
      engine: Engine,
      tp: Size,
      pp: Size,
      gpusPerNode: Size,
      nodes: Size,
      args: z.array(z.string().max(4096)).max(256),
      env: Env,
      startupTimeoutS: z.number().int().min(1).max(86400),
    }),
    env: Env.openapi({ description: "from placement: NCCL_MNNVL_ENABLE, NCCL_CUMEM_ENABLE, NCCL_IB_HCA …" }),
    pool: z.string().max(256),
    fabric: z
      .string()
      .max(256)
      .openapi({ description: "`single`, `nvlink:<clusterUuid>.<cliqueId>` or `ib:<fabric>`" }),
    fingerprint: z.string().max(128).openapi({ description: "changes whenever the engine's command line would" }),
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
