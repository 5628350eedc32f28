// GET /api/v1/agents/{node}/nvlink-peers: the addresses the control plane sees in a node's NVLink domain — what
// `llmgw doctor` compares the node's IMEX nodes_config.cfg with.
import { z } from "../z.js";

export const NvlinkPeers = z
  .object({
    domain: z.string().nullable().openapi({
      example: "00000001-0000-0000-0000-000000000001.2",
      description:
        "the calling node's NVLink domain key (`<clusterUuid>.<cliqueId>`), as GET /api/v1/nvlink groups nodes: the domain most of its cards report, else the one it was last seen in; null when it is in none",
    }),
    addresses: z.array(z.string()).openapi({
      example: ["10.0.0.11", "10.0.0.12", "10.0.0.13"],
      description:
        "the `mgmtAddr` of every registered node in that domain, the caller's own included, once each and sorted; empty when `domain` is null",
    }),
  })
  .openapi("NvlinkPeers");
export type NvlinkPeers = z.infer<typeof NvlinkPeers>;
