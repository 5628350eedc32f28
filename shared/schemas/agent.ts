import { z } from "../z.js";
import { Entries, idAt, Labels, NodeId, repeats, Text } from "./common.js";
import { ShardFailure } from "./failure.js";
import { GpuFabric, GpuHealth } from "./gpu.js";
import { HcaPort } from "./hca.js";
import { Imex, Inventory, RunningShard } from "./inventory.js";
import { ShardTransport } from "./transport.js";

export const RegisterRequest = z
  .strictObject({
    nodeId: NodeId,
    hostname: Text(253).openapi({ example: "gpu-node-01.lab" }),
    mgmtAddr: Text(253).openapi({
      example: "10.0.0.11",
      description: "address the control plane and peers reach this node on",
    }),
    mgmtInterface: Text(64).optional().openapi({ example: "eth0" }),
    agentVersion: Text(64).openapi({ example: "0.1.0" }),
    labels: Labels.optional(),
    portRange: z
      .strictObject({ first: z.number().int().min(1).max(65535), last: z.number().int().min(1).max(65535) })
      .refine((r) => r.first <= r.last, { message: "first must not exceed last" })
      .optional(),
    inventory: Inventory,
    runningShards: z.array(RunningShard).max(256).optional(),
  })
  .openapi("RegisterRequest");
export type RegisterRequest = z.infer<typeof RegisterRequest>;
export type RegisterRequestInput = z.input<typeof RegisterRequest>;

export const RegisterResponse = z
  .object({
    nodeId: NodeId,
    nodeToken: z
      .string()
      .openapi({ example: "llmgw_node_…", description: "keep it: it authenticates every later call of this node" }),
    heartbeatIntervalS: z.number().int().positive(),
    pollWaitS: z.number().int().positive(),
    nodeLostAfterS: z.number().int().positive(),
  })
  .openapi("RegisterResponse");

/** Per-GPU facts that change between registrations. */
export const GpuHeartbeat = z
  .strictObject({
    uuid: Text(128),
    memoryUsedMiB: z.number().int().nonnegative().optional(),
    utilizationPercent: z.number().min(0).max(100).optional(),
    fabric: GpuFabric.optional(),
    health: GpuHealth.optional(),
    migMemoryUsedMiB: Entries(z.string().regex(/^\d+$/), z.number().int().nonnegative(), 8).optional().openapi({
      description: "memory used per MIG instance index",
    }),
    migProblems: Entries(z.string().regex(/^\d+$/), z.array(Text(512)).max(64), 8)
      .optional()
      .openapi({ description: "each MIG instance's own problems (another process on it), by instance index" }),
  })
  .openapi("GpuHeartbeat");

export const ShardReport = z
  .strictObject({
    shardId: Text(64),
    replicaId: Text(64).optional(),
    state: Text(32).openapi({
      description: "pending, starting, loading, ready, draining, stopped or failed; anything else is read as failed",
    }),
    message: Text(2048).optional(),
    exitCode: z.number().int().optional(),
    at: z.number().int().nonnegative().optional().openapi({
      description:
        "when the node reached the state (ms since the epoch, the node's clock): a report timed before the stored one changes nothing",
    }),
    failure: ShardFailure.optional().openapi({ description: "why the engine stopped, with its log's last lines" }),
    transport: ShardTransport.optional().openapi({
      description: "the transport NCCL reported for a shard that uses it, judged against its placement",
    }),
  })
  .openapi("ShardReport");
export type ShardReport = z.infer<typeof ShardReport>;

export const Heartbeat = z
  .strictObject({
    memoryAvailableMiB: z.number().int().nonnegative().optional(),
    gpus: z.array(GpuHeartbeat).max(64).optional(),
    imex: Imex.optional(),
    ports: z
      .array(HcaPort.extend({ hca: Text(64) }))
      .max(256)
      .optional()
      .openapi({ description: "current state of each HCA port" }),
    shards: z.array(ShardReport).max(256).optional(),
    imexConfig: z
      .strictObject({
        digest: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .openapi({
            example: "5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9",
            description: "hex SHA-256 of the sorted addresses joined by newlines (shared/imex-config.ts)",
          }),
        addresses: z.number().int().nonnegative().openapi({ example: 18, description: "how many it lists" }),
      })
      .optional()
      .openapi({
        description: "the node's IMEX peer list (agent.yaml `imex_nodes_config`), sent while that file exists",
      }),
  })
  .superRefine((hb, ctx) => {
    // what a heartbeat names once is changed once: the same GPU or port twice is a mistake, not two updates
    const issues = [
      ...repeats(
        "GPU UUID",
        (hb.gpus ?? []).map((g, i) => idAt(g.uuid, "gpus", i, "uuid")),
      ),
      ...repeats(
        "port",
        (hb.ports ?? []).map((p, i) => idAt(`${p.hca}/${p.port}`, "ports", i, "port")),
      ),
    ];
    for (const issue of issues) ctx.addIssue({ code: "custom", ...issue });
  })
  .openapi("Heartbeat");
export type Heartbeat = z.infer<typeof Heartbeat>;

export const StatusReport = z.strictObject({ shards: z.array(ShardReport).min(1).max(256) }).openapi("StatusReport");
export type StatusReport = z.infer<typeof StatusReport>;

export const AgentAck = z
  .object({ nodeId: NodeId, receivedAt: z.number().int(), heartbeatIntervalS: z.number().int() })
  .openapi("AgentAck");

export const RouterInflight = z
  .object({
    port: z.number().int(),
    inflight: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "requests outstanding to the endpoint; null where this instance runs no router" }),
  })
  .openapi("RouterInflight");
