import { z } from "../z.js";
import { Text } from "./common.js";

export const HcaPort = z
  .strictObject({
    port: z.number().int().min(1).max(255),
    state: Text(32).openapi({ example: "ACTIVE", description: "from `ports/N/state` (`4: ACTIVE` → `ACTIVE`)" }),
    physState: Text(32).optional().openapi({ example: "LinkUp" }),
    rateGbps: z.number().nonnegative().optional().openapi({ example: 400 }),
    linkLayer: Text(32).optional().openapi({ example: "InfiniBand" }),
    gidPrefix: Text(64).optional().openapi({ example: "fe80:0000:0000:0000" }),
    smLid: z.number().int().min(0).max(0xffff).optional().openapi({
      example: 1,
      description:
        "from `ports/N/sm_lid` (`0x1` → 1): the LID of the subnet manager the port last heard from; 0 on an InfiniBand port means none answered (a RoCE port always reads 0)",
    }),
  })
  .openapi("HcaPort");

/** One InfiniBand / RoCE adapter from /sys/class/infiniband. */
export const Hca = z
  .strictObject({
    name: Text(64).openapi({ example: "mlx5_0" }),
    hcaType: Text(64).optional().openapi({ example: "MT4129" }),
    fwVersion: Text(64).optional(),
    boardId: Text(64).optional(),
    numaNode: z.number().int().nullable().optional(),
    ports: z.array(HcaPort).max(16),
  })
  .openapi("Hca");
export type Hca = z.infer<typeof Hca>;

/** An operator-named InfiniBand fabric this node is attached to (agent.yaml `fabrics`). */
export const FabricAttachment = z
  .strictObject({
    fabric: Text(64).openapi({ example: "ib-east" }),
    hcas: z
      .array(Text(64))
      .max(64)
      .openapi({ example: ["mlx5_0", "mlx5_1"] }),
    rateGbps: z.number().nonnegative().optional().openapi({ example: 400 }),
  })
  .openapi("FabricAttachment");
