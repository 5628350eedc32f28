import { z } from "../z.js";
import { EpochMs } from "./common.js";

export const EventType = z
  .enum([
    "node_registered",
    "node_reregistered",
    "node_lost",
    "node_recovered",
    "node_cordoned",
    "node_uncordoned",
    "node_draining",
    "node_deleted",
    "fabric_left",
    "fabric_joined",
    "imex_changed",
    "hca_port_changed",
    "replica_repaired",
    "repair_held",
    "replica_adopted",
    "shard_not_adopted",
    "deployment_failing",
    "resource_created",
    "resource_updated",
    "resource_deleted",
    "api_key_rotated",
    "admin_token_created",
    "admin_token_revoked",
    "join_token_created",
    "join_token_revoked",
    "console_login",
    "console_login_failed",
  ])
  .openapi("EventType");
export type EventType = z.infer<typeof EventType>;

export const Event = z
  .object({
    id: z.number().int().openapi({ description: "increasing; pass the last one seen as `after` to page" }),
    at: EpochMs,
    type: EventType,
    nodeId: z.string().nullable(),
    message: z
      .string()
      .openapi({ example: "gpu-node-01: all 4 GPUs left NVLink domain 3482beb4-….32766 (fabric In Progress)" }),
    data: z.record(z.string(), z.unknown()).nullable().openapi({
      description:
        "details; on audit events `via` (api or console) and, for declarations, `diff`: the changed top-level spec keys with `before`/`after` (JSON, truncated, secret-looking values masked)",
    }),
    actor: z.object({ id: z.string(), name: z.string().nullable(), role: z.string().nullable() }).nullable().openapi({
      description:
        "who made the change (audit events): the admin token's id, name and role; null for the system's own events",
    }),
    kind: z.string().nullable().openapi({
      description:
        "what was changed (audit events): model, deployment, api_key, node, admin_token, join_token or session",
      example: "model",
    }),
    name: z
      .string()
      .nullable()
      .openapi({ description: "the changed thing's name or id (audit events)", example: "llama-3-70b" }),
  })
  .openapi("Event");
export type Event = z.infer<typeof Event>;
