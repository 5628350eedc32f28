import { z } from "../z.js";
import { EpochMs, Labels, NodeId, ShardState } from "./common.js";
import { Inventory } from "./inventory.js";
import { ShardTransport } from "./transport.js";

export const NodeState = z.enum(["ready", "cordoned", "draining", "lost"]).openapi("NodeState");
export type NodeState = z.infer<typeof NodeState>;

export const DeviceView = z
  .object({
    id: z.number().int().openapi({ description: "card index, or 1000 + 100 × card + instance for MIG" }),
    label: z.string().openapi({ example: "3/mig1" }),
    class: z.string().openapi({ example: "a100-80g-mig-3g.40gb" }),
    uuid: z.string(),
    memoryTotalMiB: z.number().int(),
  })
  .openapi("Device");

export const ShardStatusView = z
  .object({
    shardId: z.string(),
    replicaId: z.string().nullable(),
    state: ShardState,
    message: z.string().nullable(),
    updatedAt: EpochMs,
    transport: ShardTransport.nullable().openapi({
      description:
        "what the shard's NCCL reported using, judged against its placement: a multi-node shard's verdict (`ok`, `degraded` with the reason, `pending`, `unverified`), or `local` with what a one-node shard uses inside the node (NVLink P2P, SHM); null when the agent reported none",
    }),
  })
  .openapi("ShardStatus");

export const NodeSummary = z
  .object({
    id: NodeId,
    hostname: z.string(),
    mgmtAddr: z.string(),
    pool: z.string(),
    labels: Labels,
    state: NodeState,
    adminState: z
      .enum(["ready", "cordoned", "draining"])
      .openapi({ description: "what an operator set; `state` adds liveness" }),
    agentVersion: z.string(),
    registeredAt: EpochMs,
    lastHeartbeatAt: EpochMs.nullable(),
    lastSeenAt: EpochMs.openapi({ description: "last registration, heartbeat, status report or poll" }),
    classes: z
      .record(z.string(), z.number().int())
      .openapi({ example: { "h100-80g": 8 }, description: "devices by class" }),
  })
  .openapi("NodeSummary");

export const Node = NodeSummary.extend({
  mgmtInterface: z.string().nullable(),
  devices: z.array(DeviceView),
  shards: z.array(ShardStatusView),
  inventory: Inventory,
}).openapi("Node");
