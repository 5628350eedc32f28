import { z } from "../z.js";
import { Text } from "./common.js";

/**
 * What a shard's NCCL reported it used, judged against what placement chose. `ok`: the transport it was placed for;
 * `degraded`: another one (a socket fallback, HCAs not assigned, no MNNVL in an NVLink domain); `pending`: NCCL has
 * not said yet; `unverified`: the engine served without NCCL saying which transport it used; `local`: a one-node
 * shard (what it uses inside the node, never gating).
 */
export const TransportVerdict = z
  .enum(["pending", "ok", "degraded", "unverified", "local"])
  .openapi("TransportVerdict");
export type TransportVerdict = z.infer<typeof TransportVerdict>;

export const ShardTransport = z
  .strictObject({
    verdict: TransportVerdict,
    expected: Text(256).openapi({
      description: "the fabric placement chose, with the HCAs it assigned",
      example: "ib:fabric-a (mlx5_0,mlx5_1)",
    }),
    via: Text(32).optional().openapi({
      description: "the transport NCCL used, in one word: NET/IB, NET/Socket, MNNVL, P2P, SHM",
      example: "NET/IB",
    }),
    observed: Text(512).optional().openapi({
      description: "what NCCL reported, in words",
      example: "NET/IB on mlx5_0:1, mlx5_1:1 with GPUDirect RDMA (NCCL 2.21.5)",
    }),
    reason: Text(1024).optional().openapi({
      description: "why it is degraded or unverified",
      example: "placed on ib:fabric-a (mlx5_0,mlx5_1); NCCL uses NET/Socket on eth0",
    }),
    ncclVersion: Text(32).optional().openapi({ example: "2.21.5" }),
  })
  .openapi("ShardTransport");
export type ShardTransport = z.infer<typeof ShardTransport>;

/** Why a transport is degraded or unverified, in words: the agent's reason, else what was placed and what was seen. */
export const transportReason = (t: ShardTransport): string =>
  t.reason ?? `placed on ${t.expected}; NCCL uses ${t.observed ?? t.via ?? "another transport"}`;
