// GET /api/v1/nvlink: every multi-node NVLink domain, its trays and GPUs, and what keeps each tray out of placement.
// The console's /admin/nvlink draws the same view.
import { z } from "../z.js";
import { ShardState } from "./common.js";
import { GpuFabric } from "./gpu.js";
import { Imex } from "./inventory.js";
import { NodeState } from "./node.js";
import { ShardTransport } from "./transport.js";

const DOMAIN_KEY = "00000001-0000-0000-0000-000000000001.2";

export const NvlinkGpu = z
  .object({
    index: z.number().int().openapi({ example: 2, description: "the card's index on its node" }),
    uuid: z.string().openapi({ example: "GPU-4a2c9f7e-0d5b-4c1e-9a6f-2e8d7c3b1a90" }),
    class: z.string().openapi({ example: "gb200-185g" }),
    module: z
      .number()
      .int()
      .nullable()
      .openapi({ example: 2, description: "platformInfo module id (the card's place in its tray), when reported" }),
    joined: z
      .boolean()
      .openapi({ description: "fabric state `Completed`, status `Success` and a non-zero cluster UUID" }),
    domain: z.string().nullable().openapi({
      example: DOMAIN_KEY,
      description:
        "the domain key this card reports (`<clusterUuid>.<cliqueId>`); null when its cluster UUID is zero or absent",
    }),
    notJoined: z.string().nullable().openapi({
      example: "fabric In Progress",
      description: "why the card is not joined, in words a person can act on; null when it is",
    }),
    degraded: z.boolean().openapi({
      description:
        "fabric health `Limited Capacity` or bandwidth `Degraded`: joined, but domains with such cards are placed on last",
    }),
    fabric: GpuFabric.nullable().openapi({
      description: "the fabric exactly as the driver reported it (fields vary by driver); null when not reported",
    }),
  })
  .openapi("NvlinkGpu");
export type NvlinkGpu = z.infer<typeof NvlinkGpu>;

export const NvlinkImexConfig = z
  .object({
    addresses: z.number().int().openapi({
      example: 17,
      description: "how many addresses the node's IMEX nodes_config.cfg lists, as its last heartbeat said",
    }),
    matches: z.boolean().openapi({
      description:
        "the list is the `mgmtAddr` of every node the control plane sees in this domain, whatever its state (what GET /api/v1/agents/{node}/nvlink-peers answers), compared by digest",
    }),
    warning: z.string().nullable().openapi({
      example: "IMEX nodes_config.cfg lists 17 addresses, not the 18 nodes of this domain",
      description:
        "the mismatch in words; null when the list matches. A warning only: it keeps no tray out of placement",
    }),
  })
  .openapi("NvlinkImexConfig");
export type NvlinkImexConfig = z.infer<typeof NvlinkImexConfig>;

export const NvlinkDegradedShard = z
  .object({
    shardId: z.string().openapi({ example: "r7-s1" }),
    replicaId: z.string().openapi({ example: "r7" }),
    reason: z.string().openapi({
      example: "placed on nvlink:00000001-0000-0000-0000-000000000001.2; NCCL uses NET/Socket on eth0",
      description: "why its transport is degraded, as its agent judged it",
    }),
  })
  .openapi("NvlinkDegradedShard");
export type NvlinkDegradedShard = z.infer<typeof NvlinkDegradedShard>;

export const NvlinkTray = z
  .object({
    node: z.string().openapi({ example: "gb200-tray-03" }),
    hostname: z.string(),
    state: NodeState,
    trayIndex: z.number().int().nullable().openapi({
      example: 3,
      description: "platformInfo tray index, when reported; trays are ordered by it, then by slot, then by node id",
    }),
    slotNumber: z
      .number()
      .int()
      .nullable()
      .openapi({ example: 14, description: "platformInfo slot number, when reported" }),
    chassisSerial: z.string().nullable().openapi({ description: "platformInfo chassis serial number, when reported" }),
    eligible: z.boolean().openapi({
      description:
        "may host a shard of a multi-node NVLink replica now: node ready, every card joined to this domain, fabric health not `Unhealthy`, IMEX ready with a channel",
    }),
    reasons: z.array(z.string()).openapi({
      example: ["GPU 2 fabric In Progress", "IMEX down"],
      description:
        "every reason the tray is not eligible (empty when it is): the node's state, each card that is not joined or unhealthy, mixed cluster UUIDs, IMEX",
    }),
    degraded: z.boolean().openapi({
      description: "some card reports `Limited Capacity` or degraded bandwidth: still eligible, but chosen last",
    }),
    warnings: z.array(z.string()).openapi({
      example: ["GPU 2 fabric health Limited Capacity, bandwidth Degraded"],
      description: "what makes the tray degraded, per card",
    }),
    joined: z.number().int().openapi({ example: 4, description: "cards joined to a multi-node domain" }),
    total: z.number().int().openapi({ example: 4, description: "cards on the node" }),
    fabricHealth: z
      .string()
      .nullable()
      .openapi({ example: "Healthy", description: "the worst fabric health summary any card reports (driver 580+)" }),
    imex: Imex,
    imexConfig: NvlinkImexConfig.nullable().openapi({
      description:
        "the node's IMEX peer list (nodes_config.cfg) against the domain's nodes; null when the node sent none (no such file, or an older agent)",
    }),
    degradedShards: z.array(NvlinkDegradedShard).openapi({
      description:
        "shards placed on the tray whose NCCL does not use the transport they were placed for (a socket fallback, no MNNVL), by replica then rank",
    }),
    gpus: z.array(NvlinkGpu).openapi({ description: "by card index" }),
  })
  .openapi("NvlinkTray");
export type NvlinkTray = z.infer<typeof NvlinkTray>;

export const NvlinkShard = z
  .object({
    shardId: z.string().openapi({ example: "r7-s0" }),
    replicaId: z.string().openapi({ example: "r7" }),
    deployment: z.string().openapi({ example: "llama-405b" }),
    node: z.string().openapi({ example: "gb200-tray-01" }),
    rank: z.number().int().openapi({ example: 0, description: "0 is the leader, whose endpoint the router uses" }),
    fabric: z.string().openapi({
      example: `nvlink:${DOMAIN_KEY}`,
      description:
        "`nvlink:<domain key>` for a multi-node NVLink replica; `single` or `ib:<fabric>` for others on the domain's trays",
    }),
    state: ShardState.or(z.literal("unknown")).openapi({
      description: "as the agent last reported it; `unknown` before its first report",
    }),
    transport: ShardTransport.nullable().openapi({
      description: "what its NCCL reported using, judged against its placement; null when the agent reported none",
    }),
  })
  .openapi("NvlinkShard");
export type NvlinkShard = z.infer<typeof NvlinkShard>;

export const NvlinkDomain = z
  .object({
    key: z.string().openapi({ example: DOMAIN_KEY, description: "`<clusterUuid>.<cliqueId>`" }),
    clusterUuid: z.string().openapi({ example: "00000001-0000-0000-0000-000000000001" }),
    cliqueId: z.string().openapi({ example: "2" }),
    eligibleTrays: z.number().int().openapi({ example: 3, description: "trays that may host a multi-node shard now" }),
    degraded: z
      .boolean()
      .openapi({ description: "some tray is degraded: placement uses this domain after healthy ones" }),
    trays: z
      .array(NvlinkTray)
      .openapi({ description: "the domain's nodes in tray order (tray index, then slot, then node id; unknown last)" }),
    shards: z.array(NvlinkShard).openapi({
      description: "shards placed in the domain (`nvlink:<key>`) or running on its trays, by replica then rank",
    }),
  })
  .openapi("NvlinkDomain");
export type NvlinkDomain = z.infer<typeof NvlinkDomain>;

export const NvlinkStandalone = z
  .object({
    node: z.string().openapi({ example: "hgx-h100-07" }),
    hostname: z.string(),
    state: NodeState,
    reason: z.string().openapi({
      example: "single-machine NVSwitch (cluster UUID is zero): not a multi-node NVLink domain",
      description: "why the node is in no multi-node domain",
    }),
    gpus: z.array(NvlinkGpu),
  })
  .openapi("NvlinkStandalone");
export type NvlinkStandalone = z.infer<typeof NvlinkStandalone>;

export const NvlinkView = z
  .object({
    domains: z.array(NvlinkDomain).openapi({ description: "every multi-node NVLink domain some node reports, by key" }),
    standalone: z.array(NvlinkStandalone).openapi({
      description:
        "nodes whose cards report an NVLink fabric but no multi-node domain (an HGX board's own NVSwitch reports a zero cluster UUID): not a domain, by node id",
    }),
    noFabric: z.array(z.string()).openapi({
      example: ["a100-mig-01"],
      description: "ids of nodes none of whose cards reports an NVLink fabric (older drivers, PCIe cards, no GPUs)",
    }),
  })
  .openapi("NvlinkView");
export type NvlinkView = z.infer<typeof NvlinkView>;
