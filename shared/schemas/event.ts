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
    data: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi("Event");
export type Event = z.infer<typeof Event>;
