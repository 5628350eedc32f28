import { z } from "../z.js";
import { EpochMs, ShardState } from "./common.js";
import { ShardFailure } from "./failure.js";
import { ShardTransport } from "./transport.js";

export const ReplicaShard = z
  .object({
    shardId: z.string(),
    nodeId: z.string(),
    rank: z.number().int(),
    devices: z
      .array(z.string())
      .openapi({ description: "device labels: `3`, or `3/mig1` for a MIG instance", example: ["0", "1", "2", "3"] }),
    httpPort: z.number().int(),
    fabric: z.string(),
    state: ShardState.or(z.literal("unknown")).openapi({
      description: "as the agent last reported it; `unknown` before its first report",
    }),
    message: z.string().nullable(),
    lastFailure: ShardFailure.nullable().openapi({
      description:
        "the last time its engine stopped unasked (exit code or signal, how long it ran, its log's last lines)",
    }),
    failure: z.string().nullable().openapi({
      description: "lastFailure in one line",
      example: "exit 1 after 3 s (restart 5 of 5): RuntimeError: CUDA out of memory",
    }),
    transport: ShardTransport.nullable().openapi({
      description:
        "what its NCCL reported using, judged against the fabric it was placed on; null for a shard NCCL said nothing about (one GPU, or before its engine started)",
    }),
  })
  .openapi("ReplicaShard");

export const ReplicaView = z
  .object({
    id: z.string().openapi({ example: "r12" }),
    deployment: z.string(),
    profile: z.string(),
    fingerprint: z.string(),
    createdAt: EpochMs,
    state: z.enum(["ready", "degraded", "starting", "failed"]).openapi({
      description:
        "ready when every shard is; degraded when every shard is ready but one's NCCL does not use the transport it was placed for (see its `transport`; served only under the deployment's `transport: prefer`); failed when any shard is",
    }),
    endpoint: z
      .string()
      .nullable()
      .openapi({ description: "rank 0's HTTP endpoint, which the router uses", example: "http://10.0.0.11:20000" }),
    shards: z.array(ReplicaShard),
  })
  .openapi("Replica");

export const ShardLog = z
  .object({
    shardId: z.string(),
    nodeId: z.string(),
    state: z.string().openapi({ description: "as its agent last reported it" }),
    failure: ShardFailure.nullable().openapi({ description: "the last time its engine stopped unasked" }),
    text: z.string().nullable().openapi({ description: "failure in one line" }),
  })
  .openapi("ShardLog");

export const ReplicaLogs = z.object({ replica: z.string(), shards: z.array(ShardLog) }).openapi("ReplicaLogs");
