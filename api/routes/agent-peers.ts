// What an agent's `llmgw doctor` asks to check its IMEX peer list (nodes_config.cfg): the management address of every
// node the control plane sees in the caller's NVLink domain.
import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { NodeId } from "../../shared/schemas/common.js";
import { NvlinkPeers } from "../../shared/schemas/nvlink-peers.js";
import { z } from "../../shared/z.js";
import { requireOwnNode } from "../auth.js";
import type { AppEnv } from "../deps.js";
import { errorResponses, jsonResponse, nodeSecurity } from "../openapi.js";
import { nvlinkPeers, readPeerNodes } from "../views/nvlink-peers.js";

const peers = createRoute({
  method: "get",
  path: "/api/v1/agents/{node}/nvlink-peers",
  operationId: "getNvlinkPeers",
  tags: ["agents"],
  summary: "The addresses of every node in the caller's NVLink domain (what its IMEX nodes_config.cfg should list)",
  description:
    "Nodes are grouped into domains as GET /api/v1/nvlink groups them (shared/fabric.ts `homeDomain` over the stored " +
    "inventory as heartbeats updated it, else the domain a node was last seen in), so a tray whose fabric manager is " +
    "restarting still counts. Every registered node of the domain is listed, whatever its state: IMEX's peer list is " +
    "the domain's members, not the ones up now. A node in no domain gets `{domain: null, addresses: []}`.",
  security: nodeSecurity,
  middleware: requireOwnNode,
  request: { params: z.object({ node: NodeId.openapi({ param: { name: "node", in: "path" } }) }) },
  responses: {
    200: jsonResponse(NvlinkPeers, "The caller's NVLink domain and the addresses in it"),
    ...errorResponses(400, 401, 403, 409),
  },
});

export const agentPeerRoutes = new OpenAPIHono<AppEnv>().openapi(peers, async (c) =>
  c.json(nvlinkPeers(await readPeerNodes(c.var.deps.store.db), c.var.node.id), 200),
);
